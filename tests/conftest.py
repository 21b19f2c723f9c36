"""Suite-wide ordering: browser tests run last. Playwright's sync API keeps an
event loop running in the main thread while a browser is open, so no asyncio
test may run between its fixtures' set-up and tear-down. (Those fixtures are
a module's own: ``make test``'s workers, which take a file at a time, the
largest files first, may run a browser file before others.)"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("e2e") is not None)
