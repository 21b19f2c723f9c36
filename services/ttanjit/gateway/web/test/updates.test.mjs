// The `update` frame (issue 13, docs/websocket.md 3): which parts of an
// update a table takes (updates.js), and the common view fields every table
// reads (seats.js). Pure modules: no DOM.
import { test } from "node:test";
import assert from "node:assert/strict";

import { planUpdate } from "../../static/js/updates.js";
import {
  seatCount, seatInfo, botTookOver, playedByBot, onAutopilot, isAway, seatPlays, isWinner, handCount, standingOrder, isOut,
} from "../../static/js/seats.js";

const ev = (game_seq, type = "x") => ({ game_seq, t: 1000 * game_seq, event: { type } });
const upd = (game_seq, events, view = { v: game_seq }) => ({ type: "update", game_id: "g", game_seq, events, view });

test("an update after the view held: every event, then its view", () => {
  const p = planUpdate(4, upd(6, [ev(5), ev(6)]));
  assert.deepEqual(p.events.map((e) => e.game_seq), [5, 6]);
  assert.equal(p.takeView, true);
  assert.equal(p.gap, false);
  assert.equal(p.seq, 6);
});

test("a replayed update: the events already held are skipped", () => {
  const p = planUpdate(5, { ...upd(7, [ev(4), ev(5), ev(6), ev(7)]), replayed: true });
  assert.deepEqual(p.events.map((e) => e.game_seq), [6, 7]);
  assert.equal(p.takeView, true);
  assert.equal(p.gap, false);
  assert.equal(p.seq, 7);
});

test("an update the view held already covers is dropped whole", () => {
  for (const f of [upd(3, [ev(3)]), upd(5, [ev(4), ev(5)]), upd(4, [])]) {
    const p = planUpdate(5, f);
    assert.deepEqual(p, { events: [], takeView: false, gap: false, seq: 5 }, JSON.stringify(f));
  }
});

test("no events (the seat's own view changed, e.g. a select): the view is taken", () => {
  const p = planUpdate(9, upd(9, []));
  assert.deepEqual(p.events, []);
  assert.equal(p.takeView, true);
  assert.equal(p.gap, false);
  assert.equal(p.seq, 9);
});

test("a gap: the events and the view are taken, and the gap is said", () => {
  const p = planUpdate(4, upd(8, [ev(7), ev(8)]));
  assert.deepEqual(p.events.map((e) => e.game_seq), [7, 8]);
  assert.equal(p.takeView, true);
  assert.equal(p.gap, true);
  assert.equal(p.seq, 8);
});

test("without a view held there is nothing to be behind of", () => {
  const p = planUpdate(0, upd(12, [ev(11), ev(12)]), false);
  assert.equal(p.gap, false);
  assert.equal(p.takeView, true);
  assert.equal(p.events.length, 2);
  assert.equal(p.seq, 12);
});

test("the common view fields of the three games", () => {
  const v = {
    n: 4,
    seats: [
      { seat: 0, kind: "human", bot: false, substituted: false, autopilot: false, connected: true },
      { seat: 1, kind: "bot", bot: true, substituted: false, autopilot: false, connected: true },
      { seat: 2, kind: "human", bot: true, substituted: true, autopilot: false, connected: false },
      { seat: 3, kind: "human", bot: false, substituted: false, autopilot: true, connected: false },
    ],
    hand_counts: [5, 4, 3, 0],
    winners: [1],
  };
  assert.equal(seatCount(v), 4);
  assert.equal(seatCount({ seats: v.seats }), 4);
  assert.equal(seatCount(null), 0);
  assert.deepEqual([0, 1, 2, 3].map((s) => botTookOver(v, s)), [false, false, true, false]);
  assert.deepEqual([0, 1, 2, 3].map((s) => playedByBot(v, s)), [false, true, true, false]);
  assert.deepEqual([0, 1, 2, 3].map((s) => onAutopilot(v, s)), [false, false, false, true]);
  // away: a person's connection dropped and no bot took the seat yet
  assert.deepEqual([0, 1, 2, 3].map((s) => isAway(v, s)), [false, false, false, true]);
  assert.deepEqual([0, 1, 2, 3].map((s) => isWinner(v, s)), [false, true, false, false]);
  assert.deepEqual([0, 1, 2, 3].map((s) => handCount(v, s)), [5, 4, 3, 0]);
  assert.equal(seatPlays({ seats: [{ kind: "empty" }] }, 0), false);
  assert.equal(seatPlays(v, 1), true);
  assert.deepEqual(seatInfo(v, null), {});
  assert.equal(botTookOver({}, 0), false);
});

test("a patch (no events: one's own hidden fields) is taken over the view held, not without one", () => {
  const f = { type: "update", game_id: "g", game_seq: 4, events: [], patch: { selection: { card: 7, row: 2 } } };
  const p = planUpdate(4, f, true);
  assert.deepEqual(p.events, []);
  assert.equal(p.takeView, true);
  assert.equal(p.seq, 4);
  assert.equal(planUpdate(4, f, false).takeView, false); // nothing held to patch
  assert.equal(planUpdate(6, { ...f, game_seq: 5 }, true).takeView, false); // overtaken by newer events
});

test("One Card's results order: the winner, then by cards left, the eliminated last, the later out higher (RULES.md 1.8)", () => {
  const v = { winners: [3], hand_counts: [4, 0, 2, 0, 7], eliminated: [1, 4] };
  assert.deepEqual(standingOrder(v, [0, 1, 2, 3, 4]), [3, 2, 0, 4, 1]);
  // equal counts keep seat order; a result with no counts (the directory's of an older game) too
  assert.deepEqual(standingOrder({ winners: [2], hand_counts: [3, 3, 0] }, [0, 1, 2]), [2, 0, 1]);
  assert.deepEqual(standingOrder({ winners: [1] }, [0, 1, 2]), [1, 0, 2]);
});

test("a seat out of the game is not away: its player may go (RULES.md 1.8, rules revision 3)", () => {
  const v = { eliminated: [2], seats: [{ kind: "human", connected: true }, { kind: "human", connected: false },
    { kind: "human", connected: false }] };
  assert.equal(isOut(v, 2), true);
  assert.equal(isOut(v, 1), false);
  assert.equal(isOut(v, null), false);
  assert.equal(isAway(v, 1), true);
  assert.equal(isAway(v, 2), false);
});

test("a seat taken once out of the game is not one a bot took over (kept, rules revision 3)", () => {
  const v = { eliminated: [0], seats: [{ kind: "human", bot: true, substituted: true, kept: true },
    { kind: "human", bot: true, substituted: true }] };
  assert.equal(botTookOver(v, 0), false);
  assert.equal(botTookOver(v, 1), true);
  assert.equal(playedByBot(v, 0), true); // nobody plays it from the table
});
