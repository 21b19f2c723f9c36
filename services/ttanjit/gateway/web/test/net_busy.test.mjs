// A full gateway's refusal (close 1013, server_full: docs/websocket.md 5):
// the client tries again after longer waits while refused — 2.5–5 s, then
// twice as long each time up to 15–30 s — so the refused do not come back
// as a herd of their own; a welcome or another kind of close ends it.
import { test } from "node:test";
import assert from "node:assert/strict";

import "./standin.mjs";

const { net } = await import("../../static/js/net.js");

test("refused as full, the tries again wait longer each time, up to 15–30 s", () => {
  const waits = [];
  const realSetTimeout = globalThis.setTimeout;
  globalThis.setTimeout = (f, ms) => { waits.push(ms); return 0; };
  try {
    net.lastSeq = 9; // the session's, as the gateway that went had numbered it
    for (let i = 0; i < 5; i++) {
      net.onFrame(JSON.stringify({ type: "error", code: "server_full", message: "…", seq: 0 }));
      net.onClose({ code: 1013 });
    }
    assert.equal(net.lastSeq, 9); // the resume says it: gapless (a refusal's seq 0 made it a resync)
    const bounds = [[2500, 5000], [5000, 10000], [10000, 20000], [15000, 30000], [15000, 30000]];
    assert.equal(waits.length, 5);
    waits.forEach((w, i) => assert.ok(w >= bounds[i][0] && w <= bounds[i][1], `try ${i + 1}: ${w} ms`));
    assert.equal(net.state, "closed");
    assert.equal(net.busy, 30000); // what the top bar reads: full (main.js updateHeader)
    net.onClose({ code: 4000 }); // a lost network is not a full gateway
    assert.equal(net.busy, 0);
    assert.ok(waits.at(-1) <= 500, waits); // the usual backoff, untouched by the refusals
    net.onClose({ code: 1013 });
    assert.ok(waits.at(-1) >= 2500 && waits.at(-1) <= 5000, waits); // from the start again
    net.raw = () => true;
    net.onFrame(JSON.stringify({ type: "welcome", session: "s1", player: "p1", resumed: false }));
    assert.equal(net.busy, 0);
  } finally {
    globalThis.setTimeout = realSetTimeout;
    clearInterval(net.pingTimer);
    clearTimeout(net.deadTimer);
  }
});
