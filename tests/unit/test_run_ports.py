"""``make run`` keeps its address and secrets across a restart
(``ttanjit.run.port_or_free``, ``kept_secret``):
the gateway's port (``TTANJIT_HTTP_PORT``, default 8080) is taken again when
the last run's connections linger in TIME_WAIT, as they do for a minute
after Ctrl-C with a browser connected (the server closes them), and is
given up only when another server listens there. A restarted stack on
another port would strand the open tab, and with it the player's identity,
which the browser keeps per origin. Real loopback sockets."""

from __future__ import annotations

import socket
import stat
from pathlib import Path

import pytest

from ttanjit.common.natsserver import free_port
from ttanjit.run import kept_secret, port_or_free


def _time_wait_on(port: int) -> None:
    """A server on ``port`` that accepted a connection and closed it first
    (so its side waits in TIME_WAIT), then stopped listening."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen()
    cli = socket.create_connection(("127.0.0.1", port))
    conn, _ = srv.accept()
    conn.close()  # the server closes first: its end goes to TIME_WAIT
    cli.recv(1)  # the client sees the close ...
    cli.close()  # ... and closes its end
    srv.close()


def test_a_port_left_in_time_wait_is_taken_again() -> None:
    port = free_port()
    _time_wait_on(port)
    plain = socket.socket()  # what the probe did: a bind without SO_REUSEADDR fails here
    try:
        plain.bind(("0.0.0.0", port))
        lingering = False
    except OSError:
        lingering = True
    finally:
        plain.close()
    assert lingering, "the kernel kept no TIME_WAIT connection: nothing tested"
    assert port_or_free(port) == port


def test_a_port_with_a_listening_server_is_given_up() -> None:
    port = free_port()
    with socket.socket() as other:
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        other.bind(("0.0.0.0", port))
        other.listen()
        chosen = port_or_free(port)
        assert chosen != port
        with socket.socket() as s:  # and the one chosen is free
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("0.0.0.0", chosen))


@pytest.mark.parametrize("name", ["token_secret", "record_key"])
def test_the_secrets_are_kept_across_runs(tmp_path: Path, name: str) -> None:
    """``make run``'s gateway secret lives in ``var/token_secret`` and the
    shards' record key in ``var/record_key`` (owner only), the same the
    next run: players' tokens outlive a restart, and the games JetStream
    kept are read again."""
    first = kept_secret(tmp_path, name)
    assert len(first) == 64 and first == kept_secret(tmp_path, name)
    assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600
    (tmp_path / name).write_text("short")  # damaged: a new one
    assert kept_secret(tmp_path, name) not in (first, "short")
