// Per-tab storage: sessionStorage survives a page reload but not a new tab,
// so two tabs are two players (friends in another tab), and a reloaded tab
// resumes its own session. The nickname is remembered across tabs.
const PREFIX = "ttanjit.";

export function get(key, fallback) {
  try {
    const v = sessionStorage.getItem(PREFIX + key);
    return v === null ? fallback : JSON.parse(v);
  } catch {
    return fallback;
  }
}

export function set(key, value) {
  try { sessionStorage.setItem(PREFIX + key, JSON.stringify(value)); } catch { /* private mode */ }
}

export function del(key) {
  try { sessionStorage.removeItem(PREFIX + key); } catch { /* ignore */ }
}

export function clearAuth() {
  for (const k of ["token", "player", "nickname", "session", "last_seq"]) del(k);
}

export function lastNickname() {
  try { return localStorage.getItem(PREFIX + "nickname") || ""; } catch { return ""; }
}

export function rememberNickname(name) {
  try { localStorage.setItem(PREFIX + "nickname", name); } catch { /* ignore */ }
}

/** Quick match's bot level per game (issue 14), remembered across tabs. */
export function lastBotLevel(game) {
  try { return localStorage.getItem(`${PREFIX}level.${game}`) || "normal"; } catch { return "normal"; }
}

export function rememberBotLevel(game, level) {
  try { localStorage.setItem(`${PREFIX}level.${game}`, level); } catch { /* ignore */ }
}
