"""``ttanjit.common.nats.server_options``: the NATS address(es) as nats-py's
``servers`` with the user taken out and given to every server (review
finding: nats-py sent a URL's user to that server only — a server the
cluster announced got none and refused every try — and sent it still
percent-encoded)."""

from __future__ import annotations

from ttanjit.common import natsauth
from ttanjit.common.nats import server_options


def test_a_user_in_the_addresses_is_given_to_every_server_decoded() -> None:
    url = natsauth.as_user("nats://a:4222,nats://b:4222", "ttanjit-bots", "s3cr#t/p@ss:w")
    assert server_options(url) == {"servers": ["nats://a:4222", "nats://b:4222"],
                                   "user": "ttanjit-bots", "password": "s3cr#t/p@ss:w"}


def test_a_token_and_no_user() -> None:
    assert server_options("tls://t0k3n@nats:4222") == {"servers": ["tls://nats:4222"],
                                                       "token": "t0k3n"}
    assert server_options("nats://10.0.0.9:4222, nats://[::1]:4223") == {
        "servers": ["nats://10.0.0.9:4222", "nats://[::1]:4223"]}


def test_addresses_naming_different_users_are_refused() -> None:
    """One connection signs in as one user: a list whose entries name
    different users was read as the first's everywhere, saying nothing."""
    import pytest

    with pytest.raises(ValueError, match="different users"):
        server_options("nats://ttanjit-bots:a@n1:4222,nats://ttanjit:b@n2:4222")
    assert server_options("nats://u:p@n1:4222,nats://n2:4222")["user"] == "u"
