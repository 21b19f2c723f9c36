// One Card's words, pure (no DOM, no state): what the selected cards would
// do, from the seat's view alone, why a play was refused, and the log's line
// for an event. Unit-tested with `node --test` (gateway/web/test).
import { ocName, ocParse, SUIT_NAME, SUIT_SYMBOL } from "./cards.js";
import { josa } from "./state.js";

/** What the selected cards would do (the seed: "고른 카드의 효과를 확인하고").
 * Whether they may go now is not said: "낼 수 있는 카드는 화면이 알려 주지
 * 않으니 직접 찾아요" — the reason comes with [카드 내기]'s refusal
 * (refusalText). Attack strengths come from the view (`attack`: {card:
 * strength} for the attack cards in the hand; games/onecard_view.py), not
 * from a table here. */
export function effectText(sel, view) {
  if (!sel.length) return "";
  const c = ocParse(sel[0]);
  const k = sel.length;
  const atk = sel.reduce((s, x) => s + (view.attack?.[x] || 0), 0);
  const names = sel.map(ocName).join(" · ");
  const emptying = k === (view.hand || []).length;
  let what;
  if (c.joker) what = `공격 ${atk}장${view.pending ? ` (쌓인 공격 ${view.pending + atk}장을 다음 사람에게 넘겨요)` : ""} · 다음 무늬를 골라요`;
  else if (atk) what = view.pending ? `공격을 넘겨요: 모두 ${view.pending + atk}장` : `다음 사람에게 공격 ${atk}장`;
  // a 3 of the current suit blocks only an attack of 2s (RULES.md 1.5): not
  // "공격 8장을 막아요" on a joker's; and not "같은 무늬 2의 공격": a chain of
  // 2s mixes suits, the 3's must be the current one (copy audit)
  else if (view.pending && c.rank === "3") {
    what = !view.twos_only ? "3은 2로만 이어진 공격만 막아요"
      : !view.suit || c.suit === view.suit ? `2 공격 ${view.pending}장을 막아요`
        : `지금 무늬(${SUIT_SYMBOL[view.suit]})의 3만 2 공격을 막아요`;
  }
  else if (c.rank === "7") what = "다음 무늬를 골라요";
  else if (c.rank === "J") what = k > 1 ? `${k}명을 건너뛰어요` : "다음 사람을 건너뛰어요";
  else if (c.rank === "Q") what = k % 2 ? "순서 방향이 바뀌어요" : "방향이 두 번 바뀌어 그대로예요";
  else if (c.rank === "K") what = "한 번 더 해요";
  else what = "효과 없음";
  if (emptying && !atk && !c.joker) what = "마지막 카드 — 내면 이겨요";
  // a 2, A or joker never empties a hand (RULES.md 1.6: it said "다음
  // 사람에게 공격 2장" for a lone last 2: 원카드 audit)
  else if (emptying && (c.joker || c.rank === "2" || c.rank === "A")) what = "2·A·조커는 마지막 카드가 될 수 없어요";
  return `${names}: ${what}`;
}

/** Whether none of the selected cards may go first now, on the seat's
 * turn (the view's `cannot`, {card: the engine's refusal code}: the client
 * keeps no rules of its own): a group goes if any of its cards may go first
 * (the server finds the order). Such a 7 or joker is sent as it is, for its
 * refusal, with no suit asked first. */
export function cannotGo(sel, view) {
  const cannot = view.cannot;
  return !!sel.length && !!cannot && view.turn === view.seat && sel.every((x) => cannot[x]);
}

/** [카드 내기]'s refusal said with the table in view (the seed: "낼 수 없는
 * 카드면 까닭을 알려 주고 내지 않아요"): the engine's refusal `code` for the
 * selected cards, and the view they were sent on, or "" (the server's own
 * message then). E.g. on a 7 that named ♠, "♦5: 낼 수 없어요 — 바뀐 무늬
 * ♠ 스페이드, 같은 숫자(7) 또는 조커만 낼 수 있어요". */
export function refusalText(code, sel, view) {
  if (!sel.length || !view.top) return "";
  const why = reason(code, sel, view);
  return why ? `${sel.map(ocName).join(" · ")}: 낼 수 없어요 — ${why}` : "";
}

function reason(code, sel, view) {
  const top = ocParse(view.top);
  const card = ocParse(sel[0]);
  const suit = `${SUIT_SYMBOL[view.suit]} ${SUIT_NAME[view.suit]}`;
  switch (code) {
    case "under_attack": return "공격을 받는 중이라 공격 카드로 넘기거나 받아야 해요";
    // what to do instead, as the table stands (RULES.md 1.6)
    case "last_card_forbidden": return view.pending
      ? `2·A·조커는 마지막 카드가 될 수 없어요. 쌓인 공격 ${view.pending}장을 받아요`
      : "2·A·조커는 마지막 카드가 될 수 없어요. 1장 뽑아요";
    case "cannot_defend": return "3으로는 2만 이어진 공격만 막을 수 있어요";
    case "weaker_attack": return "지금 공격보다 약한 카드로는 넘길 수 없어요";
    // under a 흑백 조커's attack the named suit is not playable, only what
    // passes it on (RULES.md 1.5; "바뀐 무늬 ♥ 하트 또는 조커만" read as any ♥: copy audit)
    case "joker_named_suit": return view.pending && top.rank === "BJ"
      ? "흑백 조커 공격은 컬러 조커로, 고른 무늬가 ♠이면 ♠A로도 넘길 수 있어요"
      : `조커 위에는 바뀐 무늬 ${suit} 또는 조커만 낼 수 있어요`;
    case "named_suit": return `바뀐 무늬 ${suit}, 같은 숫자(${top.rank}) 또는 조커만 낼 수 있어요`;
    case "does_not_match":
      if (view.pending && card.rank === "3") return `${suit} 3으로만 막을 수 있어요`;
      if (view.pending) return `${suit} 공격 카드, 같은 숫자(${top.rank}) 또는 조커로만 넘길 수 있어요`;
      // (the suit said as a 무늬: "♦ 다이아몬드, 같은 숫자…" read tersely: 원카드 audit)
      return `${suit} 무늬, 같은 숫자(${top.rank}) 또는 조커만 낼 수 있어요`;
    default: return "";
  }
}

/** What a play did beyond its cards, for the log (RULES.md 1.3, 1.5): a
 * block, the skips, a reversal, another turn (a replay's log said only
 * "♦3 ♣3" of a block, "♠J" of a skip: replay audit). */
function playNote(cards, blocked) {
  const ranks = cards.map(ocParse).filter((p) => !p.joker).map((p) => p.rank);
  const count = (r) => ranks.filter((x) => x === r).length;
  const notes = [];
  if (blocked && count("3")) notes.push(`공격 ${blocked}장을 막았어요`);
  if (count("J")) notes.push(count("J") > 1 ? `${count("J")}명 건너뛰기` : "건너뛰기");
  if (count("Q") % 2) notes.push("방향이 바뀌었어요");
  if (count("K")) notes.push("한 번 더");
  return notes.map((n) => ` · ${n}`).join("");
}

/** The log line an event makes, or null (the live table and the replay
 * viewer both read events through it). `said`: what the lines before it
 * said, kept across calls — a timeout's own draw, take or pass is said by
 * its timeout line alone ("시간이 지나 자동으로 1장 뽑았어요." then "1장
 * 뽑았어요." read as two draws: trial finding). */
export function logLine(ev, name, me, said = {}) {
  const own = (ev.type === "drew" && (ev.reason === "draw" || ev.reason === "take")) || ev.type === "passed";
  if (own && said.timedOut === ev.seat) {
    said.timedOut = null;
    return null;
  }
  // between a timeout and its move: its autopilot switch, a reshuffle
  if (ev.type !== "autopilot" && ev.type !== "reshuffled") said.timedOut = ev.type === "timeout" ? ev.seat : null;
  switch (ev.type) {
    case "played": {
      const suitNote = ev.left !== 0 && ev.cards.some((c) => { const p = ocParse(c); return p.joker || p.rank === "7"; })
        ? ` · 무늬 → ${SUIT_NAME[ev.suit]}` : "";
      const blocked = said.pending && !ev.pending ? said.pending : 0; // 3s on 2s (RULES.md 1.5)
      said.pending = ev.pending || 0;
      // (the last card wins: its J, Q or K does nothing, RULES.md 1.6)
      return { text: `${name(ev.seat)}: ${ev.cards.map(ocName).join(" ")}${suitNote}${ev.pending ? ` · 공격 ${ev.pending}장` : ""}`
        + (ev.left === 0 ? "" : playNote(ev.cards, blocked)) };
    }
    case "drew":
      if (ev.reason === "take") said.pending = 0;
      if (ev.reason === "take") return { text: `${name(ev.seat)}: 공격 ${ev.count}장을 받았어요.` };
      if (ev.reason === "draw") return { text: `${name(ev.seat)}: 1장 뽑았어요.` };
      if (ev.reason === "one_card_penalty") return { text: `${name(ev.seat)}: 벌칙으로 ${ev.count}장을 받았어요.`, kind: "warn" };
      return null;
    case "passed":
      return { text: `${name(ev.seat)}: 카드가 없어 넘겼어요.` };
    case "one_card":
      return { text: ev.penalty
        ? `원카드! ${josa(name(ev.seat), "이/가")} 먼저 눌러 ${josa(name(ev.holder), "이/가")} ${ev.penalty}장을 받아요.`
        : `원카드! ${josa(name(ev.holder), "이/가")} 먼저 눌러 벌칙이 없어요.`, kind: "announce" };
    case "false_call":
      return { text: `헛원카드! ${josa(name(ev.seat), "이/가")} 1장을 받아요.`, kind: "warn" };
    case "eliminated":
      return { text: `${name(ev.seat)}: 카드가 ${ev.cards}장이 되어 탈락했어요.`, kind: "warn" };
    case "timeout":
      return { text: `${name(ev.seat)}: 시간이 지나 자동으로 ${ev.action === "take" ? "받았어요" : ev.action === "pass" ? "넘겼어요" : "1장 뽑았어요"}.` };
    case "autopilot":
      return ev.on ? { text: `${name(ev.seat)}: 자동 진행으로 바뀌었어요.` } : null;
    case "reshuffled":
      return { text: `버린 카드 ${ev.cards}장을 섞어 뽑기 더미를 만들었어요.` };
    case "substituted":
      return { text: `${name(ev.seat)}: ${ev.reason === "left" ? "나가서" : "1분 안에 돌아오지 않아"} 봇이 이어받아요.` };
    case "disconnected": // my own connection is shown in the top bar, not the log
      return ev.seat !== me ? { text: `${name(ev.seat)}: 연결이 끊겼어요.` } : null;
    case "reconnected":
      return ev.seat !== me ? { text: `${name(ev.seat)}: 다시 연결됐어요.` } : null;
    default:
      return null;
  }
}
