// The common fields of every game's view (issue 13; ttanjit/games/base.py):
// `n`, `seats` (one `{seat, kind, bot, substituted, autopilot, connected}`
// per seat), `hand_counts`, `turn`, `deadline`, `paused`, `finished`,
// `winners`, `ended_by`. The three tables and the controller read seats
// through these, so a badge means the same at every table. Pure (no DOM).

/** Number of seats. */
export function seatCount(v) {
  if (typeof v?.n === "number") return v.n;
  return Array.isArray(v?.seats) ? v.seats.length : 0;
}

/** The seat's common record (an empty object when the view has none). */
export function seatInfo(v, s) {
  return (s !== null && s !== undefined && v?.seats?.[s]) || {};
}

/** A bot plays a seat a person sat in: substituted (left, or away too long).
 * Not one taken once out of the game (`kept`, 원카드's 탈락 who went): no
 * bot plays it, it is 탈락 ("봇이 대신함" said otherwise: trial finding). */
export function botTookOver(v, s) {
  const i = seatInfo(v, s);
  return !i.kept && !!(i.substituted || (i.bot && i.kind === "human"));
}

/** A bot plays the seat now (a bot's seat or a substituted person's). */
export function playedByBot(v, s) {
  const i = seatInfo(v, s);
  return !!(i.bot || i.substituted);
}

export function onAutopilot(v, s) {
  return !!seatInfo(v, s).autopilot;
}

/** The seat is out of the game (원카드's 탈락, RULES.md 1.8): nothing left to play. */
export function isOut(v, s) {
  return s !== null && s !== undefined && (v?.eliminated || []).includes(s);
}

/** The seat's person is away (their connection dropped; a bot has not taken
 * over). Not a seat out of the game: its player may go (rules 3: no bot
 * comes), and it says 탈락. */
export function isAway(v, s) {
  const i = seatInfo(v, s);
  return i.connected === false && i.kind === "human" && !botTookOver(v, s) && !isOut(v, s);
}

/** A seat that takes part (One Card and 줄줄이 벌점 may have empty seats). */
export function seatPlays(v, s) {
  return seatInfo(v, s).kind !== "empty";
}

export function isWinner(v, s) {
  return (v?.winners || []).includes(s);
}

export function handCount(v, s) {
  return v?.hand_counts?.[s] ?? 0;
}

/** One Card's seats as its results list them: the winner first, then by
 * cards left, the eliminated last, the later out the higher (in seat order
 * the winner could be listed last: trial nitpick). `v` is a view or the
 * game directory's result (the same field names). */
export function standingOrder(v, seats) {
  const out = v?.eliminated || [];
  const place = (s) => (isWinner(v, s) ? -1 : out.includes(s) ? 1000 - out.indexOf(s) : handCount(v, s));
  return [...seats].sort((a, b) => place(a) - place(b) || a - b);
}
