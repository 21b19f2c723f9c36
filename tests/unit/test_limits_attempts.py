"""The per-address attempt limit of ``POST /api/transfer/claim``
(gateway/limits.py ``Attempts``; docs/websocket.md 1.1)."""

from __future__ import annotations

import pytest

from ttanjit.gateway.limits import Attempts, address_key, counted_address


def test_burst_then_one_per_period_and_the_wait_until_the_next() -> None:
    a = Attempts(rate=1 / 30, burst=10)
    assert [a.take("1.2.3.4", 100.0) for _ in range(10)] == [0.0] * 10
    assert a.take("1.2.3.4", 100.0) == pytest.approx(30.0)
    assert a.take("1.2.3.4", 115.0) == pytest.approx(15.0)  # a refused try costs nothing
    assert a.take("1.2.3.4", 130.0) == 0.0  # one back after 30 s
    assert a.take("1.2.3.4", 130.0) == pytest.approx(30.0)
    assert a.take("5.6.7.8", 130.0) == 0.0  # another address has its own


def test_an_attempt_that_worked_is_given_back() -> None:
    a = Attempts(rate=1 / 30, burst=3)
    for _ in range(3):
        assert a.take("k", 0.0) == 0.0
        a.give_back("k", 0.0)
    assert [a.take("k", 0.0) for _ in range(4)] == [0.0, 0.0, 0.0, pytest.approx(30.0)]
    a.give_back("k", 0.0)
    a.give_back("k", 0.0)
    a.give_back("k", 0.0)
    a.give_back("k", 0.0)  # never above the burst
    assert [a.take("k", 0.0) for _ in range(4)] == [0.0, 0.0, 0.0, pytest.approx(30.0)]


def test_the_table_forgets_refilled_addresses_then_the_least_recently_used() -> None:
    a = Attempts(rate=1.0, burst=2, max_keys=10)
    for i in range(10):
        a.take(f"old{i}", 0.0)  # full again a second later
    a.take("busy", 5.0)  # the 11th key: a sweep, and only the refilled ones go
    assert len(a) == 1 and a.take("busy", 5.0) == 0.0 and a.take("busy", 5.0) > 0.0
    # nobody refilled (no time passed): the least recently used go, down to 9
    b = Attempts(rate=1.0, burst=2, max_keys=10)
    for i in range(11):
        b.take(f"k{i}", 0.0)
    assert len(b) == 9
    assert b.take("k10", 0.0) == 0.0 and b.take("k10", 0.0) == pytest.approx(1.0)  # kept
    assert b.take("k0", 0.0) == 0.0 and b.take("k0", 0.0) == 0.0  # forgotten: a full bucket


def test_an_ipv6_client_counts_as_its_64() -> None:
    """Security audit: 40 sign-ups from 40 addresses of one /64 all passed a
    limit of 30 — a host picks any address of its /64 at will."""
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:ffff::9") \
        == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("203.0.113.7") == "203.0.113.7"
    assert address_key("::1") == "::1" and not counted_address(address_key("::1"), False)
    assert address_key("::ffff:203.0.113.7") == "::ffff:203.0.113.7"
    assert address_key("testclient") == "testclient"
    assert counted_address(address_key("2001:db8::5"), False)
