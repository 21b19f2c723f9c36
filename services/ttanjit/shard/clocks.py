"""Clocks of the hosted games: one timer per game at the engine's next
deadline (clock-only inputs), bot seats asked of the bot pool after their
thinking pause (RULES.md 4), and bots' ``[원카드!]`` presses (RULES.md 1.7).
A mixin of :class:`ttanjit.shard.service.Shard`.

A bot decision is asked again (docs/protocol.md 3) while its seat still
has to act and the game is still hosted here: each request waits at most
its budget plus a margin (a worker killed mid-decision costs that much,
not the turn timer); while NATS is away the shard waits for it to come
back and asks at once. The thinking pause is taken once, and the request
(``rng`` included) is the same every time, so an answer to a repeated
request is the answer the lost one would have had."""

from __future__ import annotations

import asyncio
import logging
import time

import orjson
from nats.aio.msg import Msg
from nats.errors import ConnectionClosedError, NoRespondersError
from nats.errors import TimeoutError as NatsTimeout

from ttanjit.games.base import JSON, Result
from ttanjit.shard import metrics as m
from ttanjit.shard.live import Live, wall_ms
from ttanjit.shard.parts import ShardParts

log = logging.getLogger("ttanjit.shard")

SKIP_FOR_BOTS = ("resume", "one_card")
ASK_MARGIN_S = 0.2  # a bot request waits its budget plus this, then is asked again
HEDGE_S = 1.0  # no reply this long: the same request once more (first reply wins)
RETRY_MAX_S = 1.0  # the longest pause between two asks (no worker, NATS away)
NO_WORKER_GRACE_S = 3.0  # bot-only game: how long to wait for a replacement worker


class Clocks(ShardParts):
    # ======================================================================
    # clocks: timers, bots, One Card presses
    # ======================================================================
    def _after_change(self, live: Live) -> None:
        if live.gone:
            return
        self._schedule_bots(live)
        self._arm(live)

    def _arm(self, live: Live) -> None:
        eng = live.hosted.engine
        nd = None if eng.finished else eng.next_deadline()
        if nd is None:
            if live.timer is not None:
                live.timer.cancel()
                live.timer = None
            return
        if not live.hosted.has_active_humans() and not live.bots:
            # bot-only game: played out at once; nobody can act until the
            # deadline, so its clock jumps there
            now_t = live.now_t(self.loop.time())
            if nd > now_t:
                live.t_base += nd - now_t
        due = live.mono_base + (nd - live.t_base) / 1000
        if live.timer is not None:
            if abs(live.timer_due - due) < 0.0005:
                return
            live.timer.cancel()
        live.timer_due = due
        live.timer = self.loop.call_at(due, self._fire, live, nd)

    def _fire(self, live: Live, nd: int) -> None:
        live.timer = None
        if live.gone:
            return
        mono = self.loop.time()
        m.timer_lag.observe(max(0.0, mono - live.timer_due))
        t = max(live.now_t(mono), nd)
        try:
            out = live.hosted.apply(t, server_ms=wall_ms())
        except Exception:  # an engine bug: rebuild the game from its record
            log.exception("engine error on a clock input", extra={"game": live.game_id})
            self._engine_failed(live)
            return
        if isinstance(out, Result):  # cannot happen for a clock input; keep going
            log.error("clock input refused", extra={"game": live.game_id, "code": out.code})
            return
        self._submit(live, out, None)

    def _schedule_bots(self, live: Live) -> None:
        hosted = live.hosted
        if hosted.finished:
            return
        for seat in hosted.driven_seats():
            if seat in live.bots or not self._has_bot_action(live, seat):
                continue
            live.bots[seat] = asyncio.ensure_future(self._bot_turn(live, seat))

    @staticmethod
    def _has_bot_action(live: Live, seat: int) -> bool:
        acts = live.hosted.engine.legal_actions(seat)
        return any(a.get("type") not in SKIP_FOR_BOTS for a in acts)

    def _bot_must_act(self, live: Live, seat: int) -> bool:
        """The shard plays ``seat`` and it has a game action to take now."""
        hosted = live.hosted
        if live.gone or live.frozen or hosted.finished or seat not in hosted.driven_seats():
            return False
        return self._has_bot_action(live, seat)

    async def _bot_turn(self, live: Live, seat: int) -> None:
        """Ask the bot pool for ``seat``'s action and apply it (same
        validation as a human's command); ask again while the seat still has
        to act and the game is still ours (worker lost, NATS away)."""
        from ttanjit.bots import timing

        hosted = live.hosted
        version = hosted.version
        try:
            level = hosted.level_of(seat)
            # deterministic per game seed (RULES.md 4, docs/protocol.md 3)
            seed = hash((hosted.setup.seed, hosted.inputs, seat)) & 0xFFFFFFFF
            if hosted.has_active_humans():
                # The pause counts from the game's last input: after a
                # failover (the game already stood still for seconds) the
                # bot does not make the players wait a second time.
                waited = max(0, wall_ms() - hosted.last_ms) if hosted.last_ms else 0
                pause = timing.thinking_ms(level, seed) - waited
                if pause > 0:
                    await asyncio.sleep(pause / 1000)
                if live.gone or hosted.finished:
                    return
            version = hosted.version
            auto = hosted.on_autopilot(seat)
            reply = await self._ask_bot(live, seat, level, version, seed)
            if reply is None or live.gone or hosted.finished:
                return
            action = reply.get("action") if isinstance(reply, dict) else None
            if not isinstance(action, dict):
                return
            if auto:
                action = {**action, "auto": True}
            try:
                out = hosted.apply(live.now_t(self.loop.time()), seat, action,
                                   server_ms=wall_ms(), by="bot")
            except Exception:  # an engine bug: rebuild the game from its record
                log.exception("engine error on a bot action", extra={"game": live.game_id})
                self._engine_failed(live)
                return
            if isinstance(out, Result):
                log.debug("bot action refused", extra={"game": live.game_id, "seat": seat,
                                                       "code": out.code})
                return
            if live.bots.get(seat) is asyncio.current_task():
                del live.bots[seat]
            self._submit(live, out, None)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("bot turn failed", extra={"game": live.game_id, "seat": seat})
        finally:
            if live.bots.get(seat) is asyncio.current_task():
                del live.bots[seat]
                if not live.gone:
                    if hosted.version != version:
                        self._after_change(live)
                    elif not live.bots:
                        self._arm(live)

    async def _ask_bot(self, live: Live, seat: int, level: str, version: int,
                       seed: int) -> JSON | None:
        """The bot pool's reply for ``seat`` (None: give up — the seat no
        longer has to act, the game left this shard, or a bot-only game has
        no worker to ask: its own timeout rule acts)."""
        hosted = live.hosted
        game = hosted.setup.game
        rng = (seed * 2654435761 + 1) & 0x7FFFFFFF  # same request every time it is asked
        pause, lost_worker = 0.1, False
        no_worker_since: float | None = None
        while True:
            if (self.games.get(live.game_id) is not live or hosted.version != version
                    or not self._bot_must_act(live, seat)):
                return None
            if not self.nc.is_connected:
                await self._nats_back(RETRY_MAX_S)
                continue
            eng = hosted.engine
            nd = eng.next_deadline()
            budget = self.cfg.bot_budget_ms
            if nd is not None and hosted.has_active_humans():
                now_t = live.now_t(self.loop.time())
                budget = max(50, min(budget, nd - now_t - 100))
            req = {"game": game, "level": level, "seat": seat, "view": eng.view(seat),
                   "budget_ms": budget, "rng": rng}
            t0 = time.perf_counter()
            try:
                msg = await self._hedged_request(orjson.dumps(req),
                                                 budget / 1000 + ASK_MARGIN_S)
            except NoRespondersError:
                m.bot_timeouts.labels(game).inc()
                now = self.loop.time()
                no_worker_since = now if no_worker_since is None else no_worker_since
                if not hosted.has_active_humans():
                    # bot-only: its clock waits for us. Wait for a worker
                    # only when one was lost just now (or NATS came back).
                    recent = lost_worker or now - self.nats_back_at < NO_WORKER_GRACE_S
                    if not recent or now - no_worker_since > NO_WORKER_GRACE_S:
                        return None
                await self._nats_back(pause)
                pause = min(pause * 2, RETRY_MAX_S)
                continue
            except (TimeoutError, NatsTimeout, ConnectionClosedError) as exc:
                # the worker died mid-decision, or NATS went away: ask again
                m.bot_timeouts.labels(game).inc()
                lost_worker = True
                log.info("bot decision lost: asking again",
                         extra={"game": live.game_id, "seat": seat, "error": repr(exc)})
                await self._nats_back(0.05)
                continue
            except Exception as exc:  # noqa: BLE001 - e.g. reconnecting: wait for NATS
                m.bot_timeouts.labels(game).inc()
                log.info("bot request failed: asking again",
                         extra={"game": live.game_id, "seat": seat, "error": repr(exc)})
                await self._nats_back(pause)
                pause = min(pause * 2, RETRY_MAX_S)
                continue
            m.bot_request.labels(game).observe(time.perf_counter() - t0)
            reply = orjson.loads(msg.data)
            return reply if isinstance(reply, dict) else None

    async def _hedged_request(self, data: bytes, timeout: float) -> Msg:
        """One bot request; when no reply came within ``HEDGE_S`` (a worker
        lost with the request, e.g. its NATS server went away) the same
        request again, the first reply winning. Decisions take 50-200 ms
        (``ttanjit.bots.worker.LEVEL_CAP_MS``), so this is rare when healthy."""
        subject = self.subj.bots_decide
        first = asyncio.ensure_future(self.nc.request(subject, data, timeout=timeout))
        tasks = {first}
        try:
            done, _ = await asyncio.wait(tasks, timeout=min(HEDGE_S, timeout))
            if not done:
                tasks.add(asyncio.ensure_future(self.nc.request(subject, data,
                                                                timeout=timeout)))
            # the first to finish decides: a reply, or an error (a timeout or
            # no responders: the caller asks again at once, a fresh pair)
            done, tasks = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task.exception() is None:
                    return task.result()
            raise next(iter(done)).exception()  # type: ignore[misc]
        finally:
            for task in tasks:
                task.cancel()

    async def _nats_back(self, timeout: float) -> None:
        """Sleep ``timeout`` s, or less: until NATS reconnects."""
        try:
            await asyncio.wait_for(self.nats_back.wait(), timeout)
        except TimeoutError:
            pass

    def _schedule_presses(self, live: Live, window: JSON) -> None:
        """RULES 1.7 / 4: bot-played seats press [원카드!] after their
        reaction delay (``ttanjit.bots.timing``), only while that window is
        still open (bots never make false calls). In bot-only games (played
        out at once, no real time) nobody presses: windows expire."""
        from ttanjit.bots import timing

        hosted = live.hosted
        if not hosted.has_active_humans():
            return
        for seat in hosted.driven_seats():
            old = live.windows.pop(seat, None)
            if old is not None:
                old.cancel()
            seed = hash((hosted.setup.seed, hosted.inputs, seat, 1)) & 0xFFFFFFFF
            delay = timing.press_delay_ms(hosted.level_of(seat), seed)
            if delay is None:
                continue
            live.windows[seat] = self.loop.call_later(delay / 1000, self._press, live, seat,
                                                      dict(window))

    def _press(self, live: Live, seat: int, window: JSON) -> None:
        live.windows.pop(seat, None)
        hosted = live.hosted
        if live.gone or live.frozen or hosted.finished:
            return
        now = hosted.engine.view(seat).get("window")
        if not isinstance(now, dict) or now.get("holder") != window.get("holder") or now.get(
                "closes_at") != window.get("closes_at"):
            return  # closed (or another window): no false calls
        if seat not in hosted.driven_seats():
            return
        action: JSON = {"type": "one_card"}
        if hosted.on_autopilot(seat):
            action["auto"] = True
        try:
            out = hosted.apply(live.now_t(self.loop.time()), seat, action, server_ms=wall_ms(),
                               by="bot")
        except Exception:  # an engine bug: rebuild the game from its record
            log.exception("engine error on a press", extra={"game": live.game_id})
            self._engine_failed(live)
            return
        if not isinstance(out, Result):
            self._submit(live, out, None)

