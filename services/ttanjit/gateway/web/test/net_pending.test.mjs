// A move the tab sent and saw no answer to before a reload (static/js/net.js):
// kept in the tab's storage, sent again once connected (same cmd_id: the
// shard deduplicates), its refusal said. It was lost, unsaid, when the tab
// was reloaded offline (network audit).
import { test } from "node:test";
import assert from "node:assert/strict";

import "./standin.mjs";

// the tab before its reload: a draw pressed offline, unanswered
const held = { type: "action", game_id: "g1", cmd_id: "c1", action: { type: "draw", turn_key: 9 } };
sessionStorage.setItem("ttanjit.pending", JSON.stringify([held]));

const { net } = await import("../../static/js/net.js");
const store = await import("../../static/js/store.js");

test("a move unanswered before a reload is sent again once connected, its refusal said", async () => {
  assert.deepEqual([...net.pending.keys()], ["c1"]);
  const sent = [];
  net.raw = (f) => { sent.push(f); return true; };
  net.onFrame(JSON.stringify({ type: "welcome", session: "s1", player: "p1", resumed: true, game_id: "g1" }));
  assert.deepEqual(sent.filter((f) => f.type === "action"), [held]);
  const said = [];
  net.addEventListener("restored", (e) => said.push(e.detail));
  net.onFrame(JSON.stringify({ type: "error", cmd_id: "c1", code: "turn_passed", message: "지났어요." }));
  assert.deepEqual(said.map((f) => f.code), ["turn_passed"]);
  assert.equal(net.pending.size, 0);
  assert.deepEqual(store.get("pending", null), []); // nothing left to send after another reload
  // a move now is kept until answered; a 원카드! never (its moment passes)
  const p = net.action("g1", { type: "pass", turn_key: 10 });
  net.action("g1", { type: "one_card" }, "보내지 않았어요.");
  assert.deepEqual(store.get("pending", []).map((f) => f.action.type), ["pass"]);
  assert.equal(net.held(), 1); // what the top bar says waits to be sent: not the 원카드!
  const cmd = sent.filter((f) => f.type === "action").at(-2).cmd_id;
  net.onFrame(JSON.stringify({ type: "result", cmd_id: cmd, game_id: "g1" }));
  assert.equal((await p).type, "result");
  clearInterval(net.pingTimer);
  clearTimeout(net.deadTimer);
});
