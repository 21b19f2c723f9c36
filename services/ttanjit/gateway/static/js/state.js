// What the lobby screens share: the player, the room, the queue, ratings.
class State extends EventTarget {
  constructor() {
    super();
    this.player = null;
    this.room = null;
    this.queue = null; // the `queued` frame (and the bot level asked for) while waiting
    this.queueLevel = "";
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
    blurb: "네 사람이 하는 트릭 게임. 트릭 6개를 먼저 모아 판을 이겨요." },
};

export const LEVELS = { easy: "쉬움", normal: "보통", hard: "어려움" };

/** A bot seat's name, the same on every screen: 봇2 (보통). */
export function botName(seat, level) {
  return `봇${seat + 1} (${LEVELS[level] || "보통"})`;
}

const PLACED = { penalty_rows: "low", hakka: "high" }; // by score: fewest / most first

/** Where I finished in a history entry: "2위 · 벌점 30" (줄줄이 벌점,
 * fewest first), "1위 · 42점" (하카 카드), "" for One Card (승/패 says it)
 * or a game without scores. Equal scores share a place. */
export function placeText(g) {
  const scores = Array.isArray(g.scores) ? g.scores : null;
  const mine = scores?.[g.seat];
  if (typeof mine !== "number" || !(g.game in PLACED)) return "";
  const low = PLACED[g.game] === "low";
  const better = scores.filter((x) => typeof x === "number" && (low ? x < mine : x > mine)).length;
  return `${better + 1}위 · ${low ? `벌점 ${mine}` : `${mine}점`}`;
}
