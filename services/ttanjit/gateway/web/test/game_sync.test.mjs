// The game controller (static/js/game.js) fed frames as the session gets
// them, in node with a minimal stand-in for the browser (no DOM is drawn:
// the controller has no screen here). It checks issue 13's contract: every
// `update` goes to the table and the view, and `sync` is sent only after a
// reconnect and after a gap, never after events or the player's own action.
import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";

import { noop } from "./standin.mjs"; // the browser's stand-in, before the client's modules load

const { GameController } = await import("../../static/js/game.js");
const { net } = await import("../../static/js/net.js");

let sent = [];
net.raw = (frame) => { sent.push(frame); return true; };
const frame = (f) => net.onFrame(JSON.stringify({ server_ms: 1_000_000, ...f }));
const syncs = () => sent.filter((f) => f.type === "sync");
const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms));

function controller() {
  const ctl = new GameController();
  const seen = [];
  ctl.matched({ game_id: "g1", game: "onecard", seat: 0, players: [], options: {}, server_ms: 1_000_000 });
  ctl.table = { onEvent: (c, ev, f) => seen.push([f.game_seq, ev.type, c.view?.n ?? null]), render: noop };
  return { ctl, seen };
}

const view = (n) => ({ game: "onecard", seat: 0, n, seats: [], hand: [] });
const ev = (game_seq, type) => ({ game_seq, t: game_seq * 100, event: { type } });

beforeEach(() => { sent = []; });

test("the view after matched comes without a sync; updates follow without any", async () => {
  const { ctl, seen } = controller();
  frame({ type: "view", game_id: "g1", game_seq: 2, view: view(1), resync: false });
  frame({ type: "update", game_id: "g1", game_seq: 4, events: [ev(3, "played"), ev(4, "drew")], view: view(2),
    deadline: { seat: 1, server_ms: 1_030_000, remaining_ms: 30_000, t: 30_400 } });
  frame({ type: "update", game_id: "g1", game_seq: 4, events: [], view: view(3) }); // own view only
  frame({ type: "update", game_id: "g1", game_seq: 5, events: [ev(5, "passed")], view: view(4) });
  await tick();
  // the table saw each event with the view before its burst, in order
  assert.deepEqual(seen, [[3, "played", 1], [4, "drew", 1], [5, "passed", 3]]);
  assert.equal(ctl.view.n, 4);
  assert.equal(ctl.gameSeq, 5);
  assert.equal(ctl.at(30_400), 1_030_000); // the deadline pins the game clock
  assert.deepEqual(syncs(), []);
  ctl.close();
});

test("an update from the other game, or one already held, changes nothing", async () => {
  const { ctl, seen } = controller();
  frame({ type: "view", game_id: "g1", game_seq: 6, view: view(1) });
  frame({ type: "update", game_id: "g2", game_seq: 9, events: [ev(9, "played")], view: view(9) });
  frame({ type: "update", game_id: "g1", game_seq: 6, events: [ev(5, "played"), ev(6, "drew")], view: view(5),
    replayed: true });
  frame({ type: "update", game_id: "g1", game_seq: 7, events: [ev(6, "drew"), ev(7, "passed")], view: view(7),
    replayed: true });
  await tick();
  assert.deepEqual(seen, [[7, "passed", 1]]);
  assert.equal(ctl.view.n, 7);
  assert.deepEqual(syncs(), []);
  ctl.close();
});

test("a sync answer that updates overtook does not replace the newer view", async () => {
  const { ctl } = controller();
  frame({ type: "view", game_id: "g1", game_seq: 2, view: view(1) });
  frame({ type: "update", game_id: "g1", game_seq: 3, events: [ev(3, "played")], view: view(3) });
  frame({ type: "view", game_id: "g1", game_seq: 2, view: view(2) });
  assert.equal(ctl.view.n, 3);
  frame({ type: "view", game_id: "g1", game_seq: 3, view: view(4), resync: true }); // same seq: newer
  assert.equal(ctl.view.n, 4);
  ctl.close();
});

test("a gap in game_seq: the update is taken and a sync asked once", async () => {
  const { ctl, seen } = controller();
  frame({ type: "view", game_id: "g1", game_seq: 2, view: view(1) });
  frame({ type: "update", game_id: "g1", game_seq: 6, events: [ev(5, "played"), ev(6, "drew")], view: view(6) });
  await tick();
  assert.deepEqual(seen.map((s) => s[0]), [5, 6]);
  assert.equal(ctl.view.n, 6);
  assert.deepEqual(syncs(), [{ type: "sync", game_id: "g1" }]);
  ctl.close();
});

test("the player's own action sends no sync, nor a reconnect that brings the game back", async () => {
  const { ctl } = controller();
  frame({ type: "view", game_id: "g1", game_seq: 1, view: view(1) });
  const acting = ctl.act({ type: "draw" });
  const cmd = sent.find((f) => f.type === "action");
  assert.ok(cmd);
  frame({ type: "update", game_id: "g1", game_seq: 2, events: [ev(2, "drew")], view: view(2) });
  frame({ type: "result", cmd_id: cmd.cmd_id, game_id: "g1", game_seq: 2 });
  assert.equal((await acting).type, "result");
  await tick();
  assert.deepEqual(syncs(), []);
  // resumed or not, a welcome naming the game is followed by what was
  // missed or the whole view (docs/websocket.md 4): nothing to ask for
  frame({ type: "welcome", session: "s1", player: "p1", resumed: true, resume_result: "gapless", game_id: "g1" });
  await tick();
  frame({ type: "update", game_id: "g1", game_seq: 2, events: [ev(2, "drew")], view: view(2), replayed: true });
  frame({ type: "welcome", session: "s2", player: "p1", resumed: false, game_id: "g1" });
  await tick();
  frame({ type: "view", game_id: "g1", game_seq: 2, view: view(2), resync: true });
  await tick();
  assert.deepEqual(syncs(), []);
  // a welcome without the game (it ended while the player was away): ask
  frame({ type: "welcome", session: "s3", player: "p1", resumed: false });
  await tick();
  assert.deepEqual(syncs(), [{ type: "sync", game_id: "g1" }]);
  clearInterval(net.pingTimer);
  ctl.close();
});

test("the event frame is gone: an `event` frame is not a table event", async () => {
  const { ctl, seen } = controller();
  frame({ type: "view", game_id: "g1", game_seq: 1, view: view(1) });
  frame({ type: "event", game_id: "g1", game_seq: 2, t: 0, event: { type: "played" } });
  await tick();
  assert.deepEqual(seen, []);
  assert.deepEqual(syncs(), []);
  ctl.close();
});

// -- moves over a bad network (network audit) ---------------------------------
const el = () => ({ setAttribute: noop, addEventListener: noop, append: noop, remove: noop, dataset: {}, style: {},
  className: "", textContent: "", querySelectorAll: () => [] });
function withToasts(fn) {
  const doc = globalThis.document;
  const was = [doc.getElementById, doc.createElement, doc.createTextNode, globalThis.Node];
  const toasts = [];
  const box = { ...el(), append: (e) => toasts.push(e) };
  doc.getElementById = (id) => (id === "toasts" ? box : null);
  doc.createElement = el;
  doc.createTextNode = (t) => ({ text: t });
  globalThis.Node = class {};
  return Promise.resolve(fn(toasts)).finally(() => {
    [doc.getElementById, doc.createElement, doc.createTextNode, globalThis.Node] = was;
  });
}

test("a 원카드! pressed before a reconnect is not sent again after it; a move is", async () => {
  net.pending.clear();
  const press = net.action("g1", { type: "one_card" }, "보내지 않았어요.");
  const move = net.action("g1", { type: "draw", turn_key: 5 });
  assert.equal(sent.filter((f) => f.type === "action").length, 2);
  sent = [];
  frame({ type: "welcome", session: "s9", player: "p1", resumed: true, resume_result: "gapless", game_id: "g1" });
  assert.deepEqual(sent.filter((f) => f.type === "action").map((f) => f.action.type), ["draw"]);
  assert.deepEqual(await press, { type: "error", code: "not_sent", cmd_id: (await press).cmd_id, message: "보내지 않았어요." });
  const again = sent.find((f) => f.type === "action");
  frame({ type: "result", cmd_id: again.cmd_id, game_id: "g1" });
  assert.equal((await move).type, "result");
  clearInterval(net.pingTimer);
  clearTimeout(net.deadTimer);
});

test("a connection whose welcome never comes is dropped and tried again", async () => {
  const sockets = [];
  globalThis.WebSocket = class { constructor() { this.readyState = 0; this.closed = null; sockets.push(this); }
    close(code) { this.closed = code; this.readyState = 3; } send() {} };
  Object.assign(globalThis.WebSocket, { CONNECTING: 0, OPEN: 1 });
  net.ws = null;
  net.handshakeMs = 30;
  net.open();
  assert.equal(net.state, "connecting");
  await tick(80);
  // (it stayed "connecting" for good: a handshake a dead zone swallowed)
  assert.equal(sockets[0].closed, 4000);
  assert.equal(net.state, "closed");
  // the next try waits twice as long (a slow network still gets there)
  net.ws = null;
  net.open();
  await tick(45);
  assert.equal(sockets[1].closed, null);
  await tick(40);
  assert.equal(sockets[1].closed, 4000);
  // a welcome starts the count again
  net.ws = null;
  net.open();
  net.raw = (f) => { sent.push(f); return true; };
  frame({ type: "welcome", session: "s10", player: "p1", resumed: false });
  assert.equal(net.handshakeTries, 0);
  clearInterval(net.pingTimer);
  clearTimeout(net.deadTimer);
  net.handshakeMs = undefined;
});

test("the same move of a turn still on its way is not sent twice; a late refusal after it was played is not shown", async () => {
  const { ctl } = controller();
  net.state = "open";
  frame({ type: "view", game_id: "g1", game_seq: 1, view: { ...view(1), turn_key: 7 } });
  await withToasts(async (toasts) => {
    const first = ctl.act({ type: "draw" });
    assert.equal(await ctl.act({ type: "draw" }), null); // a double tap: not sent, nothing said
    assert.equal(toasts.length, 0);
    ctl.lastAct = null; // pressed again a while later, still before its answer: said
    assert.equal(await ctl.act({ type: "draw" }), null);
    const actions = sent.filter((f) => f.type === "action");
    assert.deepEqual(actions.map((f) => f.action), [{ type: "draw", turn_key: 7 }]);
    assert.equal(toasts.length, 1);
    frame({ type: "result", cmd_id: actions[0].cmd_id, game_id: "g1" });
    assert.equal((await first).type, "result");
    // the table not redrawn yet: pressed again later, refused as late — said nothing
    ctl.lastAct = null;
    const late = ctl.act({ type: "draw" });
    const cmd = sent.filter((f) => f.type === "action").at(-1);
    assert.notEqual(cmd.cmd_id, actions[0].cmd_id);
    frame({ type: "error", cmd_id: cmd.cmd_id, code: "turn_passed", message: "…" });
    assert.equal(await late, null);
    assert.equal(ctl.refusal ?? null, null);
  });
  ctl.close();
});

test("a new table keeps this tab's keys of it and the game before, no others (long-session audit)", () => {
  const put = (k, v = 1) => sessionStorage.setItem(`ttanjit.${k}`, JSON.stringify(v));
  for (const id of ["old1", "old2"]) for (const kind of ["t0", "log", "logseq", "change", "left", "final", "match", "rematch"]) put(`${kind}.${id}`);
  put("watchlog.w1", []);
  put("session", "s-1");
  put("pending", []);
  const ctl = new GameController();
  ctl.matched({ game_id: "old2", game: "onecard", seat: 0, players: [], options: {}, server_ms: 1_000_000 });
  ctl.matched({ game_id: "new1", game: "onecard", seat: 0, players: [], options: {}, server_ms: 1_000_000 });
  const keys = [];
  for (let i = 0; i < sessionStorage.length; i += 1) keys.push(sessionStorage.key(i));
  assert.deepEqual(keys.filter((k) => k.endsWith(".old1") || k.endsWith(".w1")), []);
  for (const kind of ["t0", "log", "final", "match", "rematch"]) assert.ok(keys.includes(`ttanjit.${kind}.old2`), kind);
  assert.ok(keys.includes("ttanjit.match.new1"));
  assert.ok(keys.includes("ttanjit.session") && keys.includes("ttanjit.pending"));
});

test("players a gateway dropped at once come back spread over half their backoff (overload audit)", async () => {
  const { spread } = await import("../../static/js/net.js");
  assert.equal(spread(500, () => 0), 250);
  assert.equal(spread(500, () => 0.999999), 500);
  assert.equal(spread(5000, () => 0.5), 3750);
  // the reconnect after a drop waits that long (1,833 of 2,000 came at exactly +0.5 s)
  const waits = [];
  const realTimeout = globalThis.setTimeout;
  const realRandom = Math.random;
  let r = 0;
  Math.random = () => (r = (r + 0.37) % 1);
  globalThis.setTimeout = (f, ms) => { waits.push(ms); return 0; };
  try {
    for (let i = 0; i < 4; i++) {
      net.backoff = 500;
      net.state = "open";
      net.onClose({ code: 1006 });
    }
  } finally {
    globalThis.setTimeout = realTimeout;
    Math.random = realRandom;
  }
  assert.equal(waits.length, 4);
  assert.ok(waits.every((w) => w >= 250 && w <= 500), waits);
  assert.ok(new Set(waits).size > 1, waits);
  clearInterval(net.pingTimer);
  clearTimeout(net.deadTimer);
});
