"""Browser tests: the real stack (nats-server with JetStream, game shard, bot
worker, matchmaker, gateway serving the web client) and Debian's chromium
driven by Playwright. Nothing is mocked.

The stack is started once per test module (the tests use fresh guest
players, so they never meet; a module's ``MATCHMAKER_ENV`` adds to the
matchmaker's settings); each test gets its own browser context.
Screenshots go to a scratch folder (``browserkit.SHOTS``); ``make
screenshots`` writes them to docs/screenshots/ for the README.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browserkit import FRAME_LOG

from ttanjit.common.natsserver import NatsServer, wait_port

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("TTANJIT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def _integration_helpers() -> Any:
    """The shard engineer's process helpers (tests/integration/conftest.py),
    loaded by path so both test folders keep their own conftest."""
    path = ROOT / "tests" / "integration" / "conftest.py"
    spec = importlib.util.spec_from_file_location("ttanjit_it_helpers", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Stack:
    """nats-server + shard + bots + matchmaker + gateway on free loopback ports."""

    def __init__(self, logdir: Path, mm_env: dict[str, str] | None = None,
                 gw_env: dict[str, str] | None = None) -> None:
        it = _integration_helpers()
        # (the production NATS users: the bot worker as the bots' user)
        self.nats = NatsServer(users=it.USERS).start()
        self.svc = it.Services(self.nats.url, logdir)
        try:
            # a short drain: at the end nobody is left to hand live games to
            self.svc.start("shard", name="shard-e2e", env={"TTANJIT_DRAIN_TIMEOUT_S": "1"})
            self.svc.start("bots", name="bots-e2e", ready="bot worker ready")
            mm = self.svc.start("matchmaker", name="matchmaker-e2e", ready="matchmaker ready",
                                env={"TTANJIT_BOT_WAIT_MS": "300",
                                     # room option `seed` (a deal the test knows), and
                                     # a short 한 판 더 window (issue 14)
                                     "TTANJIT_TEST_OPTIONS": "1",
                                     "TTANJIT_REMATCH_MS": "8000", **(mm_env or {})})
            gw = self.svc.start("gateway", name="gateway-e2e", ready="gateway ready", env={
                "TTANJIT_MATCHMAKER_ADDR": f"127.0.0.1:{mm.ports['grpc']}",
                "TTANJIT_HTTP_HOST": "127.0.0.1", **(gw_env or {})})
            wait_port("127.0.0.1", gw.ports["http"])
            self.url = f"http://127.0.0.1:{gw.ports['http']}/"
            with urllib.request.urlopen(self.url + "readyz", timeout=5) as r:
                assert r.status == 200
        except BaseException:
            self.stop()
            raise

    def logs(self) -> str:
        return "\n".join(f"===== {p.name} =====\n{p.log()[-4000:]}" for p in self.svc.procs)

    def stop(self) -> None:
        """SIGTERM front to back (gateway first, shard last); whatever has not
        exited 3 s later is killed (the e2e session's games need no handover)."""
        for p in reversed(self.svc.procs):
            if p.alive():
                p.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 3
        for p in reversed(self.svc.procs):
            try:
                p.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                print(f"{p.name} did not exit 3 s after SIGTERM: killed")
                p.proc.kill()
            p.stop()
        self.nats.stop()


# Module scope, not session: Playwright's sync API keeps an event loop
# running in the main thread while it is open, which would break every
# asyncio test collected after tests/e2e in the same pytest run.
@pytest.fixture(scope="module")
def stack(request: pytest.FixtureRequest) -> Iterator[Stack]:
    """The module's stack; a module's ``MATCHMAKER_ENV`` adds to the
    matchmaker's environment (e.g. a short room-seat wait), its
    ``GATEWAY_ENV`` to the gateway's."""
    if not (ROOT / "services/ttanjit/gateway/static/fonts/fonts.css").exists():
        pytest.fail("the web font is missing: run `make web` (make test does)")
    with tempfile.TemporaryDirectory(prefix="ttanjit-e2e-") as tmp:
        s = Stack(Path(tmp), getattr(request.module, "MATCHMAKER_ENV", None),
                  getattr(request.module, "GATEWAY_ENV", None))
        try:
            yield s
        finally:
            s.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (make test does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def new_page(browser: Any, stack: Stack, request: pytest.FixtureRequest) -> Iterator[Any]:
    """``new_page(width=…)`` -> a page on the web client in a fresh context
    (its own sessionStorage: a new player). Page errors and Content-Security-
    Policy violations fail the test."""
    contexts: list[Any] = []
    errors: list[str] = []

    def make(width: int = 1100, height: int = 900) -> Any:
        ctx = browser.new_context(viewport={"width": width, "height": height},
                                  locale="ko-KR", device_scale_factor=1)
        ctx.add_init_script("localStorage.setItem('ttanjit.anim', 'fast')")
        ctx.add_init_script(FRAME_LOG)  # the client's frames, for assert_update_frames_only
        contexts.append(ctx)
        page = ctx.new_page()
        page.set_default_timeout(20_000)
        page.on("pageerror", lambda e: errors.append(str(e)))
        watch(page)
        # the gateway's Content-Security-Policy must not block anything the client does
        page.on("console", lambda m: errors.append(m.text) if m.type == "error"
                and "Content Security Policy" in m.text else None)
        page.goto(stack.url)
        return page

    make.expected = []  # type: ignore[attr-defined]  # errors a test causes on purpose (text in them)
    yield make
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        print(stack.logs())
        dump_pages([p for ctx in contexts for p in ctx.pages])
    for ctx in contexts:
        ctx.close()
    errors = [e for e in errors if not any(x in e for x in make.expected)]  # type: ignore[attr-defined]
    assert not errors, f"JavaScript errors on the page: {errors}"


# the pages `watch` saw in the running test
_WATCHED: list[Any] = []


def watch(page: Any) -> Any:
    """Keep what ``page`` could not load and what it still waits for, said
    by :func:`dump_pages` if the test fails: a page whose client never ran
    (no sign-in form in 20 s) was seen three times in full runs, in fresh
    and in persistent contexts, with nothing to say why."""
    if "pending_loads" in page.__dict__:
        return page
    failed_loads: list[str] = []
    pending: dict[Any, tuple[float, str]] = {}
    t0 = time.monotonic()

    def ms() -> str:
        return f"{(time.monotonic() - t0) * 1000:.0f} ms"

    page.on("request", lambda r: pending.__setitem__(r, (time.monotonic(), f"{r.method} {r.url}")))
    page.on("requestfinished", lambda r: pending.pop(r, None))
    page.on("requestfailed", lambda r: (pending.pop(r, None),
                                        failed_loads.append(f"{ms()} {r.url}: {r.failure}")))
    page.on("response", lambda r: failed_loads.append(f"{ms()} {r.url}: {r.status}")
            if r.status >= 400 else None)
    page.on("console", lambda m: failed_loads.append(f"{ms()} console: {m.text}")
            if m.type == "error" else None)
    page.on("crash", lambda _: failed_loads.append(f"{ms()} the page crashed"))
    page.__dict__["failed_loads"] = failed_loads
    page.__dict__["pending_loads"] = pending
    _WATCHED.append(page)
    return page


def dump_pages(pages: list[Any]) -> None:
    for i, page in enumerate(pages):
        print(f"===== page {i}: {page.url} =====\n{_page_state(page)}")
        print("failed loads and console errors:", page.__dict__.get("failed_loads", [])[-20:])
        now = time.monotonic()
        print("requests under way:", [f"{what} ({(now - t) * 1000:.0f} ms)"
                                      for t, what in page.__dict__.get("pending_loads", {}).values()])


@pytest.fixture(autouse=True)
def _dump_watched_pages(request: pytest.FixtureRequest) -> Iterator[None]:
    """A failed test's watched pages that no fixture closed (a persistent
    context's) say their state too."""
    _WATCHED.clear()
    yield
    open_pages = [p for p in _WATCHED if not p.is_closed()]
    _WATCHED.clear()
    failed = getattr(request.node, "rep_call", None)
    if open_pages and failed is not None and failed.failed:
        print("===== watched pages still open after the test =====")
        dump_pages(open_pages)


def _page_state(page: Any) -> str:
    """What a failed test's page showed and said: its address, connection,
    toasts and refusal, and its last frames (``FRAME_LOG``) — a failure
    seen once under load says why."""
    try:
        return str(page.evaluate("""() => JSON.stringify({hash: location.hash,
          net: window.ttanjit?.net?.state,
          toasts: [...document.querySelectorAll('.toast')].map((t) => t.innerText),
          refusal: document.querySelector('#refusal:not([hidden])')?.innerText || null,
          app: (document.getElementById('app')?.innerText || '').slice(0, 120),
          client: !!window.ttanjit,
          frames: (window.__frames || []).slice(-30)}, null, 1)"""))
    except Exception as e:  # noqa: BLE001 - a closed or crashed page: say so
        return f"(no state: {e!r})"


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    rep = outcome.get_result()  # type: ignore[attr-defined]
    setattr(item, "rep_" + rep.when, rep)
