"""``common.nats.passing``: what says NATS is away for now (worth trying
again: a saved session, a result's ratings, a refresh's rotation) and what
says the request itself was wrong or the data is not there."""

from __future__ import annotations

import nats.errors
import nats.js.errors
import pytest

from ttanjit.common.nats import passing


@pytest.mark.parametrize("exc", [
    TimeoutError(), nats.errors.TimeoutError(), nats.errors.NoRespondersError(),
    nats.errors.ConnectionClosedError(), nats.errors.ConnectionReconnectingError(),
    nats.js.errors.ServiceUnavailableError(), nats.js.errors.APIError(code=503),
])
def test_nats_away_is_passing(exc: BaseException) -> None:
    assert passing(exc)


@pytest.mark.parametrize("exc", [
    nats.js.errors.KeyNotFoundError(),  # (raised without a code: it has none)
    nats.js.errors.NotFoundError(code=404), nats.js.errors.BadRequestError(code=400),
    nats.js.errors.InvalidKeyError(), nats.js.errors.KeyWrongLastSequenceError(),
    ValueError(), KeyError("x"),
])
def test_absent_or_wrong_is_not(exc: BaseException) -> None:
    assert not passing(exc)
