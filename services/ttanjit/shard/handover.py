"""Drain and handover (issue 5 item 5): a draining shard stops each game,
appends a ``handover`` marker with the exact game ``t`` and asks another
shard to adopt it (``<prefix>.shard.<id>.adopt``); the taker claims, replays
and continues. A mixin of :class:`ttanjit.shard.service.Shard`."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import orjson
from nats.aio.msg import Msg

from ttanjit.shard import metrics as m
from ttanjit.shard import records
from ttanjit.shard.live import Live, wall_ms
from ttanjit.shard.ownership import rendezvous
from ttanjit.shard.parts import ShardParts

log = logging.getLogger("ttanjit.shard")


class Handover(ShardParts):
    # ======================================================================
    # drain and handover
    # ======================================================================
    async def drain(self, timeout_s: float | None = None) -> dict[str, int]:
        """Stop taking games; hand every live game to other shards."""
        if not self.draining:
            self.draining = True
            m.draining.set(1)
            log.info("draining", extra={"games": len(self.games)})
            try:
                await self._renew()
                await self._heartbeat()
            except Exception:  # noqa: BLE001
                pass
        deadline = self.loop.time() + (timeout_s or self.cfg.drain_timeout_s)
        handed = 0
        finished = sum(1 for g in self.games.values() if g.hosted.finished)
        while self.loop.time() < deadline:
            live_games = [g for g in self.games.values() if not g.hosted.finished]
            for g in [g for g in self.games.values() if g.hosted.finished]:
                if g.finalized:
                    self._drop(g, "drain")
            if not live_games:
                break
            takers = self.book.takers(wall_ms(), exclude=self.id)
            if not takers:
                log.warning("no other shard to hand games to; their leases will expire and "
                            "the next shard to start takes them",
                            extra={"games": len(live_games)})
                break
            by_target: dict[str, list[Live]] = {}
            for g in live_games:
                by_target.setdefault(rendezvous(g.game_id, takers) or takers[0], []).append(g)
            results = await asyncio.gather(*(self._handover(tgt, gs)
                                             for tgt, gs in by_target.items()))
            handed += sum(results)
            if sum(results) == 0:
                await asyncio.sleep(0.5)
        left = sum(1 for g in self.games.values() if not g.hosted.finished)
        finished = max(finished, len(self.games) - left)
        return {"handed_over": handed, "finished": finished, "left": left}

    async def _handover(self, target: str, games: list[Live], chunk: int = 100) -> int:
        done = 0
        for i in range(0, len(games), chunk):
            part = games[i:i + chunk]
            ready = await asyncio.gather(*(self._freeze(g, target) for g in part))
            offer = [{"game_id": g.game_id, "rev": g.owner_rev, "epoch": g.epoch}
                     for g, ok in zip(part, ready, strict=True) if ok]
            if not offer:
                continue
            try:
                msg = await self.nc.request(self.subj.adopt(target),
                                            orjson.dumps({"from": self.id, "games": offer}),
                                            timeout=10)
                taken = set(orjson.loads(msg.data).get("taken", []))
            except Exception as exc:  # noqa: BLE001
                log.warning("handover to %s failed: %r", target, exc)
                taken = set()
            for g, ok in zip(part, ready, strict=True):
                if not ok:
                    continue
                if g.game_id in taken:
                    m.handovers.labels("out").inc()
                    self._drop(g, f"handed over to {target}")
                    done += 1
                else:  # not taken: serve it again
                    self._thaw(g)
        return done

    async def _freeze(self, live: Live, target: str) -> bool:
        """Stop the game here and append the handover marker (with the exact t)."""
        live.frozen = True
        for sub in live.subs:
            await sub.unsubscribe()
        live.subs = []
        if live.timer is not None:
            live.timer.cancel()
            live.timer = None
        for task in list(live.bots.values()):
            task.cancel()
        live.bots.clear()
        try:  # inputs already accepted become durable first
            await asyncio.wait_for(live.idle.wait(), 5.0)
        except TimeoutError:
            self._thaw(live)
            return False
        if live.gone:
            return False
        t = live.now_t(self.loop.time())
        live.msg_no += 1
        try:
            live.last_seq = await records.append(
                self.js, self.subj.record(live.game_id),
                {"handover": {"from": self.id, "to": target, "t": t}}, live.last_seq,
                f"{live.game_id}:{live.epoch}:{live.msg_no}")
        except Exception:  # noqa: BLE001
            log.exception("handover marker failed", extra={"game": live.game_id})
            self._thaw(live)
            return False
        return True

    def _thaw(self, live: Live) -> None:
        live.frozen = False
        if live.gone:
            return

        async def resub() -> None:
            gid = live.game_id
            live.subs = [
                await self.nc.subscribe(self.subj.cmd(gid), cb=self._cmd_cb(live)),
                await self.nc.subscribe(self.subj.sync(gid), cb=self._sync_cb(live)),
            ]
            self._after_change(live)
        asyncio.ensure_future(resub())

    async def _on_adopt(self, msg: Msg) -> None:
        try:
            req = orjson.loads(msg.data)
            games = req["games"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return self._respond(msg, {"taken": [], "error": "bad_request"})
        if self.draining:
            return self._respond(msg, {"taken": []})
        sem = asyncio.Semaphore(32)

        async def take(g: Any) -> str | None:
            try:
                gid, rev, epoch = str(g["game_id"]), int(g["rev"]), int(g["epoch"])
            except (KeyError, TypeError, ValueError):
                return None
            async with sem:
                ok = await self._claim(gid, "handover", rev, epoch)
                return gid if ok else None

        if not isinstance(games, list):
            return self._respond(msg, {"taken": [], "error": "bad_request"})
        got = await asyncio.gather(*(take(g) for g in games))
        self._respond(msg, {"taken": [x for x in got if x]})
        return None

