"""``python -m ttanjit.loadtest …`` (the same as ``ttanjit loadtest …``)."""

from __future__ import annotations

import sys

from ttanjit.loadtest.cli import main

if __name__ == "__main__":
    sys.exit(main())
