// What the lobby screens share: the player, the room, the queue, ratings.
class State extends EventTarget {
  constructor() {
    super();
    this.player = null;
    this.room = null;
    this.queue = null; // the `queued` frame while waiting
    this.queueLevel = ""; // the bot level last asked for (asked again after a lost connection)
    this.ratings = [];
  }
  emit(type) { this.dispatchEvent(new Event(type)); }
  on(type, fn) {
    this.addEventListener(type, fn);
    return () => this.removeEventListener(type, fn);
  }
}

export const state = new State();

export const GAMES = {
  onecard: { name: "원카드", seats: [2, 3, 4, 5, 6], defaultSeats: 4,
    blurb: "맨 위 카드와 무늬나 숫자가 같은 카드를 내요. 손패를 가장 먼저 비우면 이겨요." },
  penalty_rows: { name: "줄줄이 벌점", seats: [2, 3, 4, 5, 6, 7, 8, 9, 10], defaultSeats: 5,
    blurb: "모두 카드 한 장과 줄을 몰래 골라 동시에 내요. 벌점이 가장 적으면 이겨요." },
  hakka: { name: "하카 카드", seats: [4], defaultSeats: 4,
    blurb: "네 사람이 하는 트릭 게임이에요. 트릭 6개를 먼저 모으면 판을 이겨요." },
};

export const LEVELS = { easy: "쉬움", normal: "보통", hard: "어려움" };

/** A bot seat's name, the same on every screen: 봇2 (보통). */
export function botName(seat, level) {
  return `봇${seat + 1} (${LEVELS[level] || "보통"})`;
}

/** The seats' names at one table (`players`: `{seat, kind, level,
 * nickname}`), by seat: a bot's botName, a person's nickname — with the
 * seat's number when another at the table has the same one (two 민수 could
 * not be told apart in the seats, the log or the results) — or N번. */
export function seatNames(players) {
  const nick = (p) => (p.kind === "bot" ? "" : p.nickname || "");
  const count = new Map();
  for (const p of players) if (nick(p)) count.set(nick(p), (count.get(nick(p)) || 0) + 1);
  const out = {};
  for (const p of players) {
    const n = nick(p);
    out[p.seat] = p.kind === "bot" ? botName(p.seat, p.level)
      : !n ? `${p.seat + 1}번` : count.get(n) > 1 ? `${n} (${p.seat + 1}번)` : n;
  }
  return out;
}

const PLACED = { penalty_rows: "low", hakka: "high" }; // by score: fewest / most first

/** Whether the game places its seats by score (the results' `scores`). */
export function placedByScore(game) { return game in PLACED; }

/** Whether the fewest win (줄줄이 벌점's penalties) rather than the most. */
export function fewestWin(game) { return PLACED[game] === "low"; }

/** A number as the screen writes it: a negative one with a real minus
 * sign (U+2212), as the rating change's label, not an ASCII "-". */
export function num(n) { return n < 0 ? `−${Math.abs(n)}` : String(n); }

/** A change: +12, −7, ±0. */
export function signed(n) { return n > 0 ? `+${n}` : n < 0 ? num(n) : "±0"; }

/** A seat's score as the game names it: "벌점 30", "42점", "−6점" (하카 카드 pays). */
export function scoreText(game, n) { return fewestWin(game) ? `벌점 ${num(n)}` : `${num(n)}점`; }

/** Where I finished in a history entry: "2위 · 벌점 30" (줄줄이 벌점,
 * fewest first), "1위 · 42점" (하카 카드), "" for One Card (승/패 says it)
 * or a game without scores. Equal scores share a place. */
export function placeText(g) {
  const scores = Array.isArray(g.scores) ? g.scores : null;
  const mine = scores?.[g.seat];
  // an abandoned game has no places ("무효 1위 · 0점" read as a win: identity audit)
  if (typeof mine !== "number" || !placedByScore(g.game) || g.ended_by === "abandoned") return "";
  const low = fewestWin(g.game);
  const better = scores.filter((x) => typeof x === "number" && (low ? x < mine : x > mine)).length;
  // the seat the player left: where the bot that took it finished (its
  // rating counted last: "나감 2위" read as a contradiction, trial finding)
  return `${g.outcome === "left" ? "봇이 이어서 " : ""}${better + 1}위 · ${scoreText(g.game, mine)}`;
}

// 받침 of the digits as read in Korean: 영 일 이 삼 사 오 육 칠 팔 구
const DIGIT_JONG = [21, 8, 0, 16, 0, 0, 1, 8, 8, 0];

/** `word` with the particle that fits how it ends: josa("철수", "이/가")
 * → "철수가", josa("봇2 (보통)", "이/가") → "봇2 (보통)이" (what is read
 * last), josa("7", "은/는") → "7은", josa("서울", "으로/로") → "서울로";
 * a word ending in Latin letters keeps both: "Kim이(가)", "Kim(으)로". */
export function josa(word, pair) {
  const [withJong, without] = pair.split("/");
  const text = String(word);
  const last = text.replace(/[\s)\]]+$/, "").slice(-1);
  const code = last.charCodeAt(0);
  let jong = null;
  if (code >= 0xac00 && code <= 0xd7a3) jong = (code - 0xac00) % 28;
  else if (last >= "0" && last <= "9") jong = DIGIT_JONG[Number(last)];
  else if (/(^|[^A-Za-z])[A-Za-z]$/.test(text.replace(/[\s)\]]+$/, ""))) {
    // a letter on its own ("재미A": 에이) is read by its name: 엘, 엠, 엔, 알
    // end in a 받침 ("재미A이(가)" read oddly: trial nitpick); a word is left be
    jong = { L: 8, M: 16, N: 4, R: 8 }[last.toUpperCase()] ?? 0;
  }
  // unknown (a Latin word, an emoji): both, as Korean text writes them —
  // "이(가)", "을(를)", and "(으)로" ("으로(로)" read oddly: trial nitpick)
  if (jong === null) return withJong === "으로" ? `${text}(으)로` : `${text}${withJong}(${without})`;
  // (으)로: no 받침 or ㄹ takes 로
  const takesFirst = withJong === "으로" ? jong !== 0 && jong !== 8 : jong !== 0;
  return text + (takesFirst ? withJong : without);
}

/** Where a live game is, for the 관전 list (GET /api/live): "2/3판",
 * "남은 카드 5·3", and first "멈춤" when every player's connection is gone
 * (RULES.md 4: the game waits for them; it listed as if it were going on). */
export function progressText(g) {
  const paused = g.paused ? "멈춤 (모두 연결 끊김)" : "";
  let where = "";
  if (typeof g.round === "number") {
    // 판: the word the rules use for a round of 줄줄이 벌점 and a hand of Hakka alike
    where = typeof g.rounds === "number" ? `${g.round}/${g.rounds}판` : `${g.round}판`;
  } else if (Array.isArray(g.cards)) where = `남은 카드 ${g.cards.map((c) => (c === null ? "탈락" : c)).join("·")}`;
  return [paused, where].filter(Boolean).join(" · ");
}

/** 순위's line over the table: who is ranked, then my place (or what I
 * still need). With nobody ranked yet it says how to get on (not "0명의
 * 순위"), and only once: what I still need says it for me. */
export function boardLine(b, mine) {
  if (!b.players) return [mine || `${b.min_games}게임 이상 하면 순위에 올라요.`];
  const who = `순위에 오른 사람 ${b.players}명 (${b.min_games}게임 이상)`;
  return mine ? [who, mine] : [who];
}

/** What changed in my room between two of its frames, in words: who came
 * in, who went, whose connection went or came back, who is 방장 now (the
 * seats changed silently — a host who left made the guest 방장 unsaid:
 * rooms audit). Nothing for another room. Each `{text}`, and `away` or
 * `back`: whose connection (main.js says a gone one only if not back soon). */
export function roomNews(before, after, me) {
  if (!before || !after || before.code !== after.code) return [];
  const humans = (room) => new Map((room.members || []).filter((m) => m.kind === "human").map((m) => [m.player, m]));
  const was = humans(before);
  const now = humans(after);
  const name = (m) => m.nickname || "손님";
  const out = [];
  for (const [p, m] of now) {
    if (p === me) continue;
    if (!was.has(p)) out.push({ text: `${josa(name(m), "이/가")} 들어왔어요.` });
    else if (m.away && !was.get(p).away) out.push({ text: `${name(m)}의 연결이 끊겼어요. 1분 안에 돌아오지 않으면 방에서 나가요.`, away: p });
    else if (!m.away && was.get(p).away) out.push({ text: `${josa(name(m), "이/가")} 다시 연결됐어요.`, back: p });
  }
  for (const [p, m] of was) if (!now.has(p) && p !== me) out.push({ text: `${josa(name(m), "이/가")} 나갔어요.` });
  if (before.host !== after.host && now.has(after.host)) {
    out.push({ text: after.host === me ? "이제 내가 방장이에요. 봇을 넣고 게임을 시작할 수 있어요."
      : `이제 ${josa(name(now.get(after.host)), "이/가")} 방장이에요.` });
  }
  return out;
}

/** A nickname's most characters as the server counts them (auth.py
 * NICK_MAX: code points of its NFC form, blanks around dropped — an emoji
 * one, a joined one a few), not as the browser's maxlength does (UTF-16
 * units: an emoji two — the box took 8 of the 16 emoji the server allows).
 * The boxes let 4 × NICK_MAX units in (16 syllables typed in parts: 48)
 * and the form says a longer one before it is sent. */
export const NICK_MAX = 16;
export const NICK_TOO_LONG = `닉네임은 ${NICK_MAX}자까지예요.`;
// the blanks Python's str.strip drops (str.isspace), which are not JS trim's
const BLANKS = "[\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
const AROUND = new RegExp(`^${BLANKS}+|${BLANKS}+$`, "gu");
export function nicknameTooLong(text) {
  return [...text.normalize("NFC").replace(AROUND, "")].length > NICK_MAX;
}

/** A code typed with the keyboard in 한글 mode ("abcd" comes out "뮻ㅇ"):
 * said before it is sent, as what to do — it went as typed and was refused
 * as a code not found, or a wrong one (IME audit). */
export const HANGUL_CODE = "한글로 입력됐어요. 한/영 키를 눌러 영문으로 넣어 주세요.";
export function hangulTyped(text) {
  return /[\u1100-\u11FF\u3131-\u318E\uAC00-\uD7A3]/.test(String(text));
}

/** A room code as a friend may send it (spaces, a hyphen; lower case), as
 * the matchmaker keeps it: the lobby's 입장 and an invite link. */
export function roomCode(text) {
  return String(text).replace(/[\s-]+/g, "").toUpperCase();
}
