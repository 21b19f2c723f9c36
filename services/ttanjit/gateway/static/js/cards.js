// Card faces of the three games (RULES.md 1.1, 2.2, 3.1).
import { h } from "./ui.js";

// -- One Card: "10H", "AS", "BJ", "CJ" ------------------------------------
export const SUIT_SYMBOL = { S: "♠", H: "♥", D: "♦", C: "♣" };
export const SUIT_NAME = { S: "스페이드", H: "하트", D: "다이아몬드", C: "클로버" };
export const JOKER_NAME = { BJ: "흑백 조커", CJ: "컬러 조커" };

export function ocParse(code) {
  if (code === "BJ" || code === "CJ") return { rank: code, suit: null, joker: true };
  return { rank: code.slice(0, -1), suit: code.slice(-1), joker: false };
}

export function ocName(code) {
  const c = ocParse(code);
  if (c.joker) return JOKER_NAME[code];
  return `${SUIT_SYMBOL[c.suit]}${c.rank}`;
}

/** A card's name to be read out: "하트 4", not "♥4" (a screen reader's
 * symbol dictionary may say nothing for ♥). */
export function ocSpoken(code) {
  const c = ocParse(code);
  return c.joker ? JOKER_NAME[code] : `${SUIT_NAME[c.suit]} ${c.rank}`;
}

/** Text as it is to be read out: One Card's cards written with a suit's
 * sign (the log, a pick's effect: "♥K · 한 번 더") named as ocSpoken does
 * ("하트 K"): a screen reader said them as the glyph or nothing (a11y audit). */
export function spokenCards(text) {
  const name = Object.fromEntries(Object.entries(SUIT_SYMBOL).map(([k, sym]) => [sym, SUIT_NAME[k]]));
  return text.replace(/([♠♥♦♣])(10|[2-9AJQK])/g, (_, sym, rank) => `${name[sym]} ${rank}`);
}

/** A card's element: a button to press, or — given ``shown: true``, a card
 * only shown (the pile, a row, a trick, a reveal) — an image with its name
 * (a button that did nothing was read out as "버튼" and listed among the
 * controls: a11y trial). */
function cardEl(kind, attrs, base, children) {
  const { shown, ...rest } = attrs;
  return h(shown ? `span.card.${kind}` : `button.card.${kind}`,
    { ...(shown ? { role: "img" } : { type: "button" }), ...base, ...rest,
      class: cls(base.class, rest.class) }, children);
}

export function ocCard(code, attrs = {}, order = null) {
  const c = ocParse(code);
  const red = c.joker ? code === "CJ" : c.suit === "H" || c.suit === "D";
  const face = c.joker
    ? [h("span.rank", {}, "조커"), h("span.suit", {}, code === "CJ" ? "컬러" : "흑백")]
    : [h("span.rank", {}, c.rank), h("span.suit", {}, SUIT_SYMBOL[c.suit])];
  return cardEl("oc", attrs,
    { "aria-label": ocSpoken(code), dataset: { card: code }, class: cls(red ? "red" : "black", c.joker ? "joker" : "") },
    [face, order !== null ? h("span.order", {}, String(order)) : null]);
}

export function cardBack(attrs = {}) {
  return h("span.card.back", { "aria-hidden": "true", ...attrs });
}

const cls = (...names) => names.filter(Boolean).join(" ");

// -- 줄줄이 벌점: 1..104 with "벌점 N" -------------------------------------
export function prPenalty(n) {
  if (n === 55) return 7;
  if (n % 11 === 0) return 5;
  if (n % 10 === 0) return 3;
  if (n % 5 === 0) return 2;
  return 1;
}

export function prCard(n, attrs = {}) {
  const p = prPenalty(n);
  return cardEl("pr", attrs, { "aria-label": `${n} 벌점 ${p}`, dataset: { card: String(n) }, class: `pen${p}` },
    [h("span.num", {}, String(n)), h("span.pen", {}, `벌점 ${p}`)]);
}

// -- 하카 카드: sup9 gon1 zok5 sin3 wan -------------------------------------
export const HK_SUITS = ["sup", "gon", "zok", "sin"];
export const HK_SUIT_NAME = { sup: "섭", gon: "곤", zok: "족", sin: "신" };

export function hkParse(code) {
  if (code === "wan") return { suit: null, num: 1 };
  return { suit: code.slice(0, 3), num: Number(code.slice(3)) };
}

export function hkName(code) {
  if (code === "wan") return "완신";
  const c = hkParse(code);
  return `${HK_SUIT_NAME[c.suit]} ${c.num}`;
}

export function hkCard(code, elder = false, attrs = {}) {
  const c = hkParse(code);
  return cardEl("hk", attrs,
    { "aria-label": hkName(code) + (elder ? " 상위 카드" : ""), dataset: { card: code },
      class: cls(`hk-${c.suit || "wan"}`, elder ? "elder" : "") },
    [h("span.suit", {}, c.suit ? HK_SUIT_NAME[c.suit] : "완신"),
      h("span.num", {}, String(c.num)),
      elder ? h("span.star", { title: "상위 카드" }, "★") : null]);
}

/** Sort helpers for the hands. */
const OC_RANKS = ["3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "2", "A"];
const OC_SUITS = ["S", "H", "D", "C"];
export function ocSort(cards) {
  const key = (code) => {
    const c = ocParse(code);
    if (c.joker) return 1000 + (code === "CJ" ? 1 : 0);
    return OC_SUITS.indexOf(c.suit) * 100 + OC_RANKS.indexOf(c.rank);
  };
  return [...cards].sort((a, b) => key(a) - key(b));
}

export function hkSort(cards) {
  const key = (code) => {
    const c = hkParse(code);
    return c.suit ? HK_SUITS.indexOf(c.suit) * 10 + (10 - c.num) : 99;
  };
  return [...cards].sort((a, b) => key(a) - key(b));
}

/** The selection left once an action pressed with `sent` selected is
 * accepted: none, unless the player picked other cards while the answer was
 * on its way (the update of the next turn can come before it, e.g. after a K
 * in One Card, and the player may already be choosing); those stay picked. */
export function selectionAfter(sent, now) {
  return now.length === sent.length && now.every((c, i) => c === sent[i]) ? [] : now;
}
