// The identity's HTTP calls (static/js/identity.js) when the network loses
// the request: fetch rejects (offline, or the network changed under it).
// They threw, and a pressed button (닉네임 바꾸기, 다른 기기에서 계속하기, 내 기록)
// did nothing; now they answer like a refusal, with words for the player.
import { test } from "node:test";
import assert from "node:assert/strict";

import "./standin.mjs";

globalThis.fetch = async () => { throw new TypeError("Failed to fetch"); };

const identity = await import("../../static/js/identity.js");
const store = await import("../../static/js/store.js");

test("a lost request is answered as a refusal with the player's words", async () => {
  store.set("token", "t");
  store.set("expires_ms", Date.now() + 3_600_000);
  store.set("refresh", "r");
  for (const call of [() => identity.signInAsGuest("새손님"), () => identity.rename("새이름"), () => identity.transferCode(),
    () => identity.claimCode("ABCDEFGH"), () => identity.getJson("api/history/onecard")]) {
    const r = await call();
    assert.equal(r.ok, false);
    assert.equal(r.status, 0);
    assert.equal(r.body.message, identity.OFFLINE_MESSAGE);
  }
  // 로그아웃 says why and keeps the player signed in
  assert.equal(await identity.signOut(), identity.OFFLINE_MESSAGE);
  assert.equal(store.get("refresh", null), "r");
});

test("a token due for refresh stays the old one while the network is away", async () => {
  store.set("token", "old");
  store.set("expires_ms", Date.now() + 1_000); // inside the early-refresh margin
  store.set("refresh", "r");
  assert.equal(await identity.ensureToken(), "old");
  assert.equal(store.get("refresh", null), "r");
});

/** A fetch answering from `routes` (path → (request) → [status, body]), logging each call. */
function serve(routes, log) {
  return async (path, opts = {}) => {
    const auth = opts.headers?.authorization || null;
    log.push([path, auth]);
    const [status, body] = routes[path]({ auth, body: opts.body ? JSON.parse(opts.body) : null });
    return { ok: status < 300, status, json: async () => body };
  };
}

/** Signed in with an access token that looks fresh here and `refresh`. */
function signedIn(refresh) {
  store.set("token", "stale");
  store.set("expires_ms", Date.now() + 3_600_000);
  store.set("refresh", refresh);
}

test("a token the server refuses is refreshed and the request made once more", async () => {
  signedIn("fam.s0"); // the device's clock is behind the server's: the token looks fresh here
  const log = [];
  globalThis.fetch = serve({
    "api/history/onecard": ({ auth }) => (auth === "Bearer new" ? [200, { games: [] }] : [401, { code: "bad_token", message: "…" }]),
    "api/refresh": () => [200, { token: "new", player: "p_1", nickname: "나", expires_ms: Date.now() + 3_600_000, refresh: "fam.s1" }],
  }, log);
  const r = await identity.getJson("api/history/onecard");
  assert.equal(r.ok, true);
  assert.deepEqual(log.map(([p, a]) => `${p} ${a}`),
    ["api/history/onecard Bearer stale", "api/refresh null", "api/history/onecard Bearer new"]);
  assert.equal(store.get("refresh", null), "fam.s1");
});

test("a credential the server refuses signs out as refused, not as 로그아웃", async () => {
  signedIn("fam.gone");
  const log = [];
  globalThis.fetch = serve({
    "api/transfer": () => [401, { code: "bad_token", message: "…" }],
    "api/refresh": () => [401, { code: "bad_refresh", message: "…" }],
  }, log);
  const r = await identity.transferCode();
  assert.equal(r.status, 401);
  assert.equal(log.length, 2); // the refusal, the refresh; nothing more
  assert.equal(store.signedOut(), "refused");
  assert.equal(store.get("refresh", null), null);
  store.markSignedOut(true);
  assert.equal(store.signedOut(), "signout");
});

test("a request is not waited for for ever", async () => {
  // a refresh the network swallowed held every reconnect behind it
  let signal = null;
  globalThis.fetch = async (path, opts) => { signal = opts.signal; throw new TypeError("Failed to fetch"); };
  signedIn("fam.x");
  await identity.ensureToken(true);
  assert.ok(signal instanceof AbortSignal);
});
