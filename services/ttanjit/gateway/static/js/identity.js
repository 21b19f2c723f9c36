// The lasting guest identity (issue 15; docs/websocket.md 1.1): the access
// token is short-lived (1 h); the rotating refresh credential in local
// storage gets a new one. Nothing secret ever goes into a URL: the token
// travels in the hello frame and in the Authorization header.
import * as store from "./store.js";

const EARLY_MS = 5 * 60_000; // refresh a token this long before it expires
const REQUEST_MS = 15_000; // an HTTP request unanswered this long is lost (offline)
let inflight = null;

function keep(body) {
  store.set("token", body.token);
  store.set("player", body.player);
  store.set("nickname", body.nickname);
  store.set("expires_ms", body.expires_ms);
  if (body.refresh) store.set("refresh", body.refresh);
  store.rememberNickname(body.nickname);
  store.markSignedOut(false);
}

// A request the network lost (offline, or the network changed under it: a
// phone between Wi-Fi and mobile data) is answered like a refusal, with
// words for the player: it threw, and the button pressed did nothing.
export const OFFLINE_MESSAGE = "서버에 연결할 수 없어요. 잠시 후 다시 해 주세요.";
const offline = () => ({ ok: false, status: 0, body: { code: "offline", message: OFFLINE_MESSAGE } });

/** A request, answered `{ok, status, body}` (`token`: the access token it carries). */
async function call(path, { body = null, token = null } = {}) {
  const headers = body ? { "content-type": "application/json" } : {};
  if (token) headers.authorization = `Bearer ${token}`;
  let res;
  try {
    // not waited for for ever: a refresh the network swallowed held every
    // reconnect behind it (connect() waits for the token; browser check)
    const signal = AbortSignal.timeout?.(REQUEST_MS);
    res = await fetch(path, body ? { method: "POST", headers, body: JSON.stringify(body), signal } : { headers, signal });
  } catch {
    return offline();
  }
  const out = await res.json().catch(() => ({}));
  return { ok: res.ok, status: res.status, body: out };
}

const post = (path, body) => call(path, { body });

/** A route of mine: with the access token (refreshed first when about to
 * expire), and once more with a new one when the server refuses it
 * (`bad_token`: this device's clock behind the server's, so it looked
 * fresh; every screen said "다시 로그인해 주세요." until a reload; identity
 * audit). */
async function mine(path, body = null) {
  let r = await call(path, { body, token: await ensureToken() });
  if (r.status === 401 && r.body.code === "bad_token" && store.get("refresh", null)) {
    const token = await ensureToken(true);
    if (token) r = await call(path, { body, token });
  }
  return r;
}

/** Sign in as a new guest: remember everything the server sent. */
export async function signInAsGuest(nickname) {
  const r = await post("api/guest", { nickname });
  if (r.ok) keep(r.body);
  return r;
}

/** A valid access token, refreshed first when it is missing or about to
 * expire. Resolves to the token, or null (signed out: sign in again). */
export async function ensureToken(force = false) {
  const token = store.get("token", null);
  const exp = store.get("expires_ms", 0);
  if (token && !force && (!exp || exp - Date.now() > EARLY_MS)) return token;
  if (!store.get("refresh", null)) return token;
  if (!inflight) inflight = refresh().finally(() => { inflight = null; });
  return inflight;
}

async function refresh() {
  const cred = store.get("refresh", null);
  const r = await post("api/refresh", { refresh: cred });
  if (r.ok) {
    // refresh: null = rotated a moment ago by an older server; local storage has the new one
    keep({ ...r.body, refresh: r.body.refresh || store.get("refresh", null) });
    return r.body.token;
  }
  if (r.status === 401) {
    // another tab may have rotated it just now: only a credential nobody changed is dead
    if (store.get("refresh", null) !== cred) return ensureToken(true);
    store.clearAuth();
    // a new start is a new account, as after 로그아웃 (review) — said as what
    // it is: refused, not signed out of (identity audit)
    store.markSignedOut("refused");
    return null;
  }
  return store.get("token", null); // offline, or the store away: the old token may still do
}

/** GET a "me" route with the access token in the header. */
export const getJson = (path) => mine(path);

export async function rename(nickname) {
  const r = await mine("api/nickname", { nickname });
  if (r.ok) keep(r.body);
  return r;
}

export const transferCode = () => mine("api/transfer", {});

export async function claimCode(code) {
  const r = await post("api/transfer/claim", { code });
  if (r.ok) keep(r.body);
  return r;
}

/** Sign out: the server revokes the refresh credential first, so no copy of
 * it works any more; only then does this browser forget the player.
 * Resolves to null when signed out, else the message to show (the server
 * could not revoke it, or cannot be reached: still signed in, try again). */
export async function signOut() {
  const cred = store.get("refresh", null);
  if (cred) {
    const r = await post("api/signout", { refresh: cred });
    if (!r.ok) return r.body.message || "로그아웃하지 못했어요. 잠시 후 다시 해 주세요.";
  }
  store.clearAuth();
  store.markSignedOut(true);
  return null;
}
