"""The bot-worker service (docs/protocol.md section 3).

Workers subscribe to ``<prefix>.bots.decide`` in the queue group ``bots``:
NATS hands each request to one worker, so more workers = more capacity.

A request carries the game, the level, the seat, the seat's view and a time
budget; the answer is computed from that view only. Two layers:

- :func:`parse_request` / :func:`answer` — sans-I/O: validate a payload, run the
  policy, build the reply (``{"action": …}``, ``{"press_after_ms": …}`` or a
  refusal ``{"ok": false, "code": …, "message": …}``).
- :class:`BotWorker` — the asyncio layer: NATS subscription, at most
  ``capacity`` decisions at once (each in a worker thread, so the event loop
  keeps serving), a decision whose budget ran out before it could start or
  finish is abandoned (no reply: the game's own timeout rule acts), metrics,
  graceful drain on SIGTERM (in-flight requests are answered first).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import orjson

from ttanjit import bots
from ttanjit.bots import metrics
from ttanjit.common.nats import Subjects, refusals, subscribed
from ttanjit.common.natsauth import BOTS_QUEUE

log = logging.getLogger("ttanjit.bots")

QUEUE_GROUP = BOTS_QUEUE

# Search time a level may use at most, whatever budget the shard offers (ms):
# the shard offers the seat's remaining time, the bot needs far less.
LEVEL_CAP_MS = {"easy": 50.0, "normal": 50.0, "hard": float(bots.HARD_BUDGET_MS)}
# Kept back from the budget for the reply's trip (ms).
MARGIN_MS = 5.0

MESSAGES = {
    "bad_request": "잘못된 봇 요청이에요.",
    "bot_error": "봇이 수를 고르지 못했어요.",
}


class BadRequest(Exception):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Request:
    kind: str  # "decide" | "one_card"
    game: str
    level: str
    seat: int
    view: dict[str, Any]
    budget_ms: float
    rng: int


def _int(obj: dict[str, Any], key: str, default: int | None = None) -> int:
    v = obj.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool):
        raise BadRequest(f"{key} must be an integer")
    return v


def parse_request(data: bytes) -> Request:
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise BadRequest("payload is not JSON") from None
    if not isinstance(obj, dict):
        raise BadRequest("payload must be a JSON object")
    kind = obj.get("kind", "decide")
    if kind not in ("decide", "one_card"):
        raise BadRequest("kind must be decide or one_card")
    game = obj.get("game")
    if game not in bots.GAMES:
        raise BadRequest(f"game must be one of {', '.join(bots.GAMES)}")
    level = obj.get("level")
    if level not in bots.LEVELS:
        raise BadRequest(f"level must be one of {', '.join(bots.LEVELS)}")
    seat = _int(obj, "seat")
    if not 0 <= seat < 10:
        raise BadRequest("seat out of range")
    view = obj.get("view")
    if not isinstance(view, dict):
        raise BadRequest("view must be an object")
    if view.get("game", game) != game:
        raise BadRequest(f"view is not a view of {game}")
    budget = obj.get("budget_ms", bots.HARD_BUDGET_MS)
    if not isinstance(budget, (int, float)) or isinstance(budget, bool) or budget <= 0:
        raise BadRequest("budget_ms must be a positive number")
    rng = _int(obj, "rng", 0)
    return Request(kind, game, level, seat, view, float(budget), rng)


def refusal(code: str, detail: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"ok": False, "code": code, "message": MESSAGES[code]}
    if detail:
        out["detail"] = detail
    return out


def search_budget_ms(req: Request, started: float) -> float:
    """What the policy may spend: the request's budget left minus a margin,
    never more than the level's cap."""
    left = req.budget_ms - (time.perf_counter() - started) * 1000 - MARGIN_MS
    return max(0.0, min(left, LEVEL_CAP_MS[req.level]))


def answer(req: Request, started: float | None = None) -> dict[str, Any]:
    """Run the policy for one request (sans-I/O; raises on a policy bug)."""
    started = time.perf_counter() if started is None else started
    rng = random.Random(req.rng)
    if req.kind == "one_card":
        return {"press_after_ms": bots.press_after_ms(req.game, req.level, req.seat,
                                                      req.view, rng)}
    action = bots.decide(req.game, req.level, req.seat, req.view, rng,
                         search_budget_ms(req, started))
    return {"action": action}


class NotAllowed(RuntimeError):
    """NATS refused the bot worker's user its subscription."""


class BotWorker:
    """One worker process's NATS side. ``capacity`` decisions run at once."""

    def __init__(self, nc: Any, prefix: str = "ttanjit.v1", capacity: int = 4) -> None:
        self.nc = nc
        self.subject = Subjects(prefix).bots_decide
        self.capacity = capacity
        self._slots = asyncio.Semaphore(capacity)
        self._pool = ThreadPoolExecutor(max_workers=capacity, thread_name_prefix="bot")
        self._tasks: set[asyncio.Task[None]] = set()
        self._sub: Any = None
        metrics.CAPACITY.set(capacity)

    async def start(self) -> None:
        self._sub = await self.nc.subscribe(self.subject, queue=QUEUE_GROUP, cb=self._on_msg,
                                            pending_msgs_limit=10_000)
        await subscribed(self.nc)  # "ready" means a shard's next ask reaches us
        # (a refused subscription is said before the flushes' answers)
        if any(self.subject in r for r in refusals(self.nc)):
            raise NotAllowed(
                f"NATS refuses this user the bots' subject {self.subject} (queue "
                f"{QUEUE_GROUP}): the NATS users' permissions (deploy/nats/values.yaml) "
                "and nats.prefix disagree, or this is not the bots' user")

    async def _on_msg(self, msg: Any) -> None:
        # the connection it came on (a reply is let through on that one only)
        msg.ttanjit_conn = self.nc.stats["reconnects"]
        task = asyncio.get_running_loop().create_task(self._handle(msg))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _handle(self, msg: Any) -> None:
        started = time.perf_counter()
        metrics.INFLIGHT.inc()
        try:
            await self._serve(msg, started)
        finally:
            metrics.INFLIGHT.dec()

    async def _serve(self, msg: Any, started: float) -> None:
        try:
            req = parse_request(msg.data)
        except BadRequest as exc:
            metrics.ERRORS.labels("unknown", "unknown").inc()
            await self._reply(msg, refusal("bad_request", exc.detail))
            return
        labels = (req.game, req.level)
        deadline = started + req.budget_ms / 1000
        async with self._slots:
            if time.perf_counter() >= deadline:
                metrics.ABANDONED.labels(*labels).inc()
                return  # waited past its budget: the game's timeout rule acts
            loop = asyncio.get_running_loop()
            try:
                reply = await loop.run_in_executor(self._pool, answer, req, started)
            except Exception:
                log.exception("policy failed: %s/%s seat %d", req.game, req.level, req.seat)
                metrics.ERRORS.labels(*labels).inc()
                await self._reply(msg, refusal("bot_error"))
                return
        if time.perf_counter() >= deadline:
            metrics.ABANDONED.labels(*labels).inc()
            return
        await self._reply(msg, reply)
        metrics.DECISIONS.labels(*labels).inc()
        metrics.DECISION_SECONDS.labels(*labels).observe(time.perf_counter() - started)

    async def _reply(self, msg: Any, body: dict[str, Any]) -> None:
        """Answer on the connection the ask came on, or not at all: NATS lets
        the bots' user answer an ask there only (``allow_responses``), and
        an answer held over a reconnect was refused — counted as a
        misconfiguration, paging (review finding). The shard asks again."""
        if not msg.reply:
            return
        if not self.nc.is_connected or self.nc.stats["reconnects"] != getattr(
                msg, "ttanjit_conn", self.nc.stats["reconnects"]):
            log.info("an answer to an ask from before NATS reconnected is dropped "
                     "(the shard asks again)")
            return
        await msg.respond(orjson.dumps(body))

    @property
    def inflight(self) -> int:
        return len(self._tasks)

    async def drain(self, unsubscribe: bool = True) -> None:
        """Stop taking requests, answer those in flight, then return
        (``unsubscribe`` False: NATS is away, the subscription cannot be
        drained there; the requests already here are still answered)."""
        if self._sub is not None:
            if unsubscribe:
                try:
                    await self._sub.drain()  # no new requests; buffered ones still run
                except Exception as exc:  # noqa: BLE001 - NATS went away meanwhile
                    log.warning("could not drain the subscription: %r", exc)
            self._sub = None
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        self._pool.shutdown(wait=True)
