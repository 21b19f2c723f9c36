// Storage. Who I am lasts (issue 15; docs/websocket.md 1.1): the player,
// nickname, access token and the rotating refresh credential live in
// localStorage, so every tab, reload and later day of this browser is the
// same player (the newer tab's connection wins the table). What belongs to
// one tab stays in sessionStorage: its WebSocket session and last seq (a
// reloaded tab resumes its own session), the games it left, the match info.
const PREFIX = "ttanjit.";
const LASTING = new Set(["token", "player", "nickname", "refresh", "expires_ms"]);
const area = (key) => (LASTING.has(key) ? localStorage : sessionStorage);
// lasting keys under their own prefix (`ttanjit.nickname` is the sign-in form's remembered text)
const name = (key) => (LASTING.has(key) ? `${PREFIX}id.${key}` : PREFIX + key);

export function get(key, fallback) {
  try {
    const v = area(key).getItem(name(key));
    return v === null ? fallback : JSON.parse(v);
  } catch {
    return fallback;
  }
}

export function set(key, value) {
  try { area(key).setItem(name(key), JSON.stringify(value)); } catch { /* private mode */ }
}

export function del(key) {
  try { area(key).removeItem(name(key)); } catch { /* ignore */ }
}

/** The storage key of ``key`` (a `storage` event names it so). */
export function keyName(key) {
  return name(key);
}

/** This tab's own keys of the player it holds: its session, last seq, queue,
 * unanswered moves. */
export function forgetTab() {
  for (const k of ["session", "last_seq", "queue", "pending"]) del(k);
}

// a game's keys in this tab (`t0.<id>`, `log.<id>`, …): what its table,
// log, results and 한 판 더 need while it is on screen or may come back
const PER_GAME = ["t0", "log", "logseq", "watchlog", "change", "left", "final", "match", "rematch"];

/** This tab's keys of games other than ``ids``, removed: each game left ~5
 * keys and ~1 KB for good (14 games: 72 keys), games left through 한 판 더
 * their match and offer too, and the storage's quota, once reached, would
 * drop the writes a reload needs (session, pending moves) unsaid
 * (long-session audit). */
export function keepGames(ids) {
  const keep = new Set(ids.filter(Boolean));
  try {
    const keys = []; // (all first: removing reorders the storage's keys)
    for (let i = 0; i < sessionStorage.length; i += 1) keys.push(sessionStorage.key(i));
    for (const k of keys) {
      if (!k?.startsWith(PREFIX)) continue;
      const [kind, ...rest] = k.slice(PREFIX.length).split(".");
      if (PER_GAME.includes(kind) && rest.length && !keep.has(rest.join("."))) sessionStorage.removeItem(k);
    }
  } catch { /* no storage (private mode) */ }
}

export function clearAuth() {
  for (const k of LASTING) del(k);
  forgetTab();
}

// This browser's choices (raw strings under PREFIX, every tab): null when
// none was made or storage is not there (private mode); `value` null forgets.
function remembered(key) {
  try { return localStorage.getItem(PREFIX + key); } catch { return null; }
}

function remember(key, value) {
  try {
    if (value === null) localStorage.removeItem(PREFIX + key);
    else localStorage.setItem(PREFIX + key, value);
  } catch { /* ignore */ }
}

export function lastNickname() {
  return remembered("nickname") || "";
}

/** This browser signed its player out (로그아웃), or the server refused its
 * credential: the sign-in screen then says a new start is a new account,
 * and fills in no nickname (trial: the old one, filled in, made a new empty
 * account of the same name). "signout", "refused" or null. */
export function signedOut() {
  const why = remembered("signedout");
  return why === "1" ? "signout" : why === "refused" ? "refused" : null;
}

/** `why`: true (로그아웃), "refused" (the credential no longer works), or false. */
export function markSignedOut(why) {
  remember("signedout", why === "refused" ? "refused" : why ? "1" : null);
}

export function rememberNickname(name) {
  remember("nickname", name);
}

/** Quick match's bot level per game (issue 14), remembered across tabs. */
export function lastBotLevel(game) {
  return remembered(`level.${game}`) || "normal";
}

export function rememberBotLevel(game, level) {
  remember(`level.${game}`, level);
}

/** The seat count last chosen per game, remembered as the bot level is
 * (trial: the lobby kept the level and forgot the 인원); `fallback` when
 * none was or it is not one of `allowed`. */
export function lastSeats(game, allowed, fallback) {
  const n = Number(remembered(`seats.${game}`));
  return allowed.includes(n) ? n : fallback;
}

export function rememberSeats(game, seats) {
  remember(`seats.${game}`, String(seats));
}
