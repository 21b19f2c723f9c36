// One Card's play preview, pure (no DOM, no state): what the selected cards
// would do, from the seat's view alone. Unit-tested with `node --test`
// (gateway/web/test).
import { ocName, ocParse } from "./cards.js";

/** What the selected cards would do (the seed: "고른 카드의 효과를 확인하고").
 * Attack strengths come from the view (`attack`: {card: strength} for the
 * attack cards in the hand; games/onecard_view.py), not from a table here. */
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
  else if (view.pending && c.rank === "3") what = `공격 ${view.pending}장을 막아요`;
  else if (c.rank === "7") what = "다음 무늬를 골라요";
  else if (c.rank === "J") what = k > 1 ? `${k}명을 건너뛰어요` : "다음 사람을 건너뛰어요";
  else if (c.rank === "Q") what = k % 2 ? "순서 방향이 바뀌어요" : "방향이 두 번 바뀌어 그대로예요";
  else if (c.rank === "K") what = "한 번 더 해요";
  else what = "효과 없음";
  if (emptying && !atk && !c.joker) what = "마지막 카드 — 내면 이겨요";
  return `${names}: ${what}`;
}
