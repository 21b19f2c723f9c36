// One Card table (RULES.md 1, seed 000 "딴짓 기본 규칙"): own hand, others'
// card counts, the top card and `무늬 → 하트`, direction, draw pile, selection
// of one or several same-rank cards with small order numbers, the effect
// preview, [1장 뽑기] left and [카드 내기] right, the suit picker, [공격 N장
// 받기], [카드 없음 · 넘기기], refusals, [원카드!] (always there; over every
// screen while a window is open), 헛원카드, eliminations, spectating, the turn
// timer, autopilot and [직접 하기]. Playable cards are NOT highlighted: the
// seed says players find them.
import { josa } from "./state.js";
import { h, mount, button, announce as say, focusHome } from "./ui.js";
import { ocCard, ocName, ocSpoken, ocParse, ocSort, SUIT_SYMBOL, SUIT_NAME, cardBack, selectionAfter } from "./cards.js";
import { gameHeader, timerEl, refusalBox, autopilotBar, resultsPanel, OUT_LINE, seatBadges, takenOverBar, meMark, isMine,
  tookOverMark, noWinnerTitle } from "./game.js";
import * as clock from "./clock.js";
import * as store from "./store.js";
import { cannotGo, effectText, logLine, refusalText } from "./onecard_text.js";
import { seatCount, seatPlays, onAutopilot, botTookOver, isOut, isWinner, handCount, standingOrder } from "./seats.js";

export { effectText }; // the preview, pure (onecard_text.js)

function ts(ctl) {
  const v = ctl.view;
  const st = ctl.tableState;
  if (!st.sel) st.sel = [];
  if (!st.log) st.log = logSoFar(ctl);
  // a replay step's pile shows the last play whole, as the live table does
  // (it showed the top card alone): the record's events up to the step say it
  if (ctl.replay && st.lastPlay === undefined) st.lastPlay = lastPlayIn(ctl.eventsSoFar());
  const hand = v.hand || [];
  st.sel = st.sel.filter((c) => hand.includes(c));
  if (v.turn !== ctl.seat()) st.picker = false;
  return st;
}

function seatName(ctl, s) {
  const n = ctl.names()[s];
  return n || `${s + 1}번`;
}

export function render(ctl, root) {
  const v = ctl.view;
  const st = ts(ctl);
  const me = ctl.seat();
  const gone = me !== null && botTookOver(v, me); // a bot plays my seat now: nothing to press
  const autoOn = me !== null && onAutopilot(v, me) && !gone && !ctl.replay && !v.finished;
  // a replay is read-only; on autopilot the bot plays my turns until
  // [직접 하기] (RULES.md 1.9): nothing to pick or press (1장 뽑기 and 카드
  // 내기 were offered and "내 차례예요." said while the bot played, as at
  // 하카 카드's table before its UX audit); 원카드! stays, not a turn's move
  if (autoOn) { st.sel = []; st.picker = false; }
  const myTurn = !ctl.replay && !v.finished && v.turn === me && me !== null && !gone && !autoOn;
  const out = isOut(v, me);

  const head = gameHeader(ctl, [
    h("span.dir", { title: "순서 방향" }, v.direction === 1 ? "↻ 시계 방향" : "↺ 반시계 방향"),
  ]);

  // others, in turn order starting after me
  const n = seatCount(v);
  const others = [];
  for (let i = 1; i <= n; i++) {
    const s = ((me ?? -1) + i + n) % n;
    if (s === me || !inGame(v, s)) continue;
    others.push(s);
  }
  const opp = h("ol.oc-opponents", {}, others.map((s) => {
    const elim = isOut(v, s);
    return h("li.opp", { class: [v.turn === s ? "turn" : "", elim ? "out" : ""].join(" "), dataset: { seat: s } },
      h("span.name", {}, seatName(ctl, s)),
      h("span.count", { title: "카드 수" }, cardBack({ class: "mini" }), ` ${handCount(v, s)}장`),
      v.turn === s ? h("span.badge.turn", {}, "차례") : null,
      handCount(v, s) === 1 && !elim ? h("span.badge.one", {}, "한 장!") : null,
      elim ? h("span.badge.out", {}, "탈락") : null,
      isWinner(v, s) ? h("span.badge.win", {}, "승리") : null,
      seatBadges(ctl, s),
      v.turn === s ? timerEl(ctl, v.deadline, v.turn_ms) : null);
  }));

  const top = ocParse(v.top);
  const suitSet = top.joker || top.rank === "7";
  const center = h("div.oc-center", {},
    // an empty pile is an empty place (a full card back at 0장: trial nitpick)
    h("div.pile", { title: "뽑기 더미" }, v.draw_pile > 0 ? cardBack({ class: "big" }) : h("span.card.big.empty-pile", { "aria-hidden": "true" }),
      h("span.pile-count", {}, `뽑기 더미 ${v.draw_pile}장`)),
    h("div.top", {},
      h("div.top-cards", {}, lastPlay(st, v)),
      suitSet || v.suit !== top.suit ? h("p.suit-now", { dataset: { suit: v.suit } }, `무늬 → ${SUIT_NAME[v.suit] || v.suit}`) : null),
    v.pending ? h("p.attack", { dataset: { say: "attack" } }, `공격 ${v.pending}장!`) : null,
  );

  const status = h("p.oc-status", { dataset: { say: "status" } }, // said by game.js sayChanges
    v.finished ? "게임이 끝났어요."
      : out ? (ctl.replay ? "탈락했어요." : "탈락했어요. 남은 게임을 구경하거나 나가도 돼요.")
        : myTurn ? (v.pending ? `공격을 받았어요! ${defence(v)}${v.pending}장을 받아요.` : "내 차례예요.")
          : gone && v.turn === me ? "봇이 내 자리에서 하는 차례예요."
            : autoOn && v.turn === me ? "자동 진행이 내 차례를 대신하고 있어요."
            : v.turn !== null ? `${seatName(ctl, v.turn)}의 차례예요.` : "",
    myTurn ? [" ", timerEl(ctl, v.deadline, v.turn_ms, true)] : null);

  const sel = st.sel;
  const effect = h("p.effect", { dataset: { say: "effect" } }, sel.length ? effectText(sel, v) : (myTurn ? "낼 카드를 눌러 골라요. 같은 숫자는 여러 장 함께 고를 수 있어요." : ""));

  const canAct = myTurn && !out && !v.paused;
  let left;
  if (v.pending && myTurn) { // the attack is the one who must take it's, never the attacker's
    left = button(`공격 ${v.pending}장 받기`, () => act(ctl, { type: "take" }), { class: "take", disabled: !canAct, dataset: { act: "take" } });
  } else if (v.can_draw === false) {
    left = button("카드 없음 · 넘기기", () => act(ctl, { type: "pass" }), { disabled: !canAct, dataset: { act: "pass" } });
  } else {
    left = button("1장 뽑기", () => act(ctl, { type: "draw" }), { disabled: !canAct, dataset: { act: "draw" } });
  }
  const right = button("카드 내기", () => play(ctl), { class: "primary", disabled: !canAct || !sel.length, dataset: { act: "play" } });
  // none when a bot plays my seat, as at the other tables (trial nitpick)
  const actions = out || gone || autoOn || v.finished || ctl.replay ? null : h("div.oc-actions", {}, left, right);

  // a dialog for the keyboard too: focus on its first suit, Tab stays in
  // it, Escape is 취소, and the focus goes back to 카드 내기 (a11y trial)
  const closePicker = (focus) => { st.picker = false; ctl.focusNext = focus; ctl.render(); };
  const picker = st.picker ? h("div.suit-picker", { role: "dialog", "aria-modal": "true", "aria-label": "다음 무늬 고르기",
    onkeydown: (e) => pickerKey(e, () => closePicker('[data-act="play"]')) },
    h("p", {}, "다음 무늬를 골라요"),
    // (named 스페이드, not "♠ 스페이드": the sign is for the eyes)
    h("div.row", {}, ["S", "H", "D", "C"].map((s) => button([h("span", { "aria-hidden": "true" }, SUIT_SYMBOL[s]), ` ${SUIT_NAME[s]}`],
      () => { closePicker(".oc-hand .card"); play(ctl, s); }, { class: `suit-btn ${s === "H" || s === "D" ? "red" : ""}`, dataset: { suit: s } }))),
    button("취소", () => closePicker('[data-act="play"]'), { class: "small", dataset: { act: "picker_cancel" } })) : null;

  const hand = h("div.hand.oc-hand", { role: "group", "aria-label": "내 손패", dataset: { focusHome: "" } }, ocSort(v.hand || []).map((c) => {
    const i = sel.indexOf(c);
    return ocCard(c, { class: i >= 0 ? "selected" : "", "aria-pressed": String(i >= 0), disabled: out || autoOn || v.finished || ctl.replay,
      onclick: () => toggle(ctl, c) }, i >= 0 && sel.length > 1 ? i + 1 : null);
  }));

  const oneCardBtn = out || gone || v.finished || me === null || ctl.replay ? null
    : button("원카드!", () => pressOneCard(ctl), { class: "onecard-btn", dataset: { act: "one_card" } });

  const shown = st.log.slice(-4);
  const log = h("ol.oc-log", { "aria-label": "최근 진행" }, shown.map((l, i) => h("li", { class: l.kind || "",
    dataset: i === shown.length - 1 ? { say: "log" } : {} }, l.text))); // the newest line is said

  mount(root, h("section.table.oc", { dataset: { game: "onecard", turn: String(v.turn), me: String(me) } },
    head,
    v.finished ? results(ctl) : null,
    takenOverBar(ctl),
    autopilotBar(ctl, autoOn, !!v.resume_pending?.[me]),
    opp, center, status, log,
    // the preview, the buttons, 원카드! and the hand stay at the bottom of the
    // screen while the table scrolls, as 줄줄이 벌점's dock (on a 360×740
    // phone the hand was below the fold on every turn: trial finding); a
    // refusal shows over the table right above them (app.css)
    h("div.table-dock.oc-dock", { class: me !== null && !out && !gone && !v.finished && !ctl.replay ? "docked" : "" },
      // a refusal over the line of what the picked cards do, growing up
      // over the table when long, never over the buttons (app.css)
      h("div.oc-say", {}, refusalBox(), effect), actions, picker,
      h("div.my-row", { dataset: { seat: me } }, h("span.name", {}, `${seatName(ctl, me)}${meMark(ctl, me)} · ${v.hand ? v.hand.length : (v.hand_counts?.[me] ?? 0)}장`),
        me !== null ? seatBadges(ctl, me) : null, oneCardBtn),
      hand)));
  showTurnSeat(opp);
  if (ctl.focusNext) { // the suit picker's first suit, or back from it
    root.querySelector(ctl.focusNext)?.focus({ preventScroll: true });
    ctl.focusNext = null;
  } else if (st.picker && !root.querySelector(".suit-picker").contains(document.activeElement)) {
    root.querySelector(".suit-picker [data-suit]")?.focus({ preventScroll: true });
  }
  updateFloat(ctl);
}

/** On a phone the opponents are one strip that scrolls sideways (app.css):
 * the seat whose turn it is is scrolled into it (seats past the third were
 * off-screen, their 차례 badge and timer with them: trial finding). */
function showTurnSeat(strip) {
  const el = strip.querySelector(".opp.turn");
  if (!el || strip.scrollWidth <= strip.clientWidth + 1) return;
  const s = strip.getBoundingClientRect();
  const e = el.getBoundingClientRect();
  if (e.left < s.left) strip.scrollLeft -= s.left - e.left;
  else if (e.right > s.right) strip.scrollLeft += e.right - s.right;
}

/** A seat dealt in (a One Card table may have empty seats). */
function inGame(v, s) {
  return seatPlays(v, s) && (!Array.isArray(v.dealt) || v.dealt[s]);
}

/** The pile's top: the last play whole while its cards are all still on
 * the pile — a reshuffle keeps only the top card (RULES.md 1.8: the cards
 * under it went into the draw pile and still showed: replay audit). */
function lastPlay(st, v) {
  const lp = st.lastPlay;
  const onPile = (c) => !Array.isArray(v.discard) || v.discard.includes(c);
  if (lp && lp.cards[lp.cards.length - 1] === v.top && lp.cards.length > 1 && lp.cards.every(onPile)) {
    return lp.cards.map((c, i) => ocCard(c, { shown: true, class: i === lp.cards.length - 1 ? "top-card" : "under" }, i + 1));
  }
  return [ocCard(v.top, { shown: true, class: "top-card", "aria-label": `맨 위 카드 ${ocSpoken(v.top)}` })];
}

function toggle(ctl, code) {
  const st = ctl.tableState;
  const i = st.sel.indexOf(code);
  if (i >= 0) st.sel.splice(i, 1);
  else {
    const r = ocParse(code);
    const first = st.sel[0] && ocParse(st.sel[0]);
    const same = first && (first.joker ? r.joker : (!r.joker && first.rank === r.rank));
    if (!same) st.sel = [];
    if (st.sel.length < 4) st.sel.push(code);
  }
  st.picker = false;
  ctl.render();
}

async function act(ctl, action, explain = null) {
  const st = ctl.tableState;
  const sent = [...st.sel];
  const r = await ctl.act(action, explain);
  if (r) {
    st.sel = selectionAfter(sent, st.sel);
    if (!st.sel.length) st.picker = false;
  }
  return r;
}

/** The suit picker's keys: Escape cancels, Tab and Shift+Tab go round its buttons. */
const PICKER_ARROWS = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };

function pickerKey(e, cancel) {
  if (e.key === "Escape") { e.preventDefault(); cancel(); return; }
  // the arrows move between the suits, as in the hand (only Tab did: a11y audit)
  const suits = [...e.currentTarget.querySelectorAll("[data-suit]")];
  const at = suits.indexOf(document.activeElement);
  if (e.key in PICKER_ARROWS && at >= 0) {
    e.preventDefault();
    suits[(at + PICKER_ARROWS[e.key] + suits.length) % suits.length].focus();
    return;
  }
  if (e.key !== "Tab") return;
  const btns = [...e.currentTarget.querySelectorAll("button")];
  const i = btns.indexOf(document.activeElement);
  const next = e.shiftKey ? (i <= 0 ? btns.length - 1 : i - 1) : (i + 1) % btns.length;
  e.preventDefault();
  btns[next].focus();
}

async function play(ctl, suit) {
  const st = ctl.tableState;
  const sel = [...st.sel];
  if (!sel.length) return;
  const c = ocParse(sel[0]);
  const emptying = sel.length === (ctl.view.hand || []).length;
  // a card that cannot go is sent as it is, for the server's refusal: no
  // suit asked first (under attack a 7 opened the picker, and its refusal
  // came after a suit was picked: trial finding)
  if ((c.joker || c.rank === "7") && !suit && !emptying && !cannotGo(sel, ctl.view)) {
    st.picker = true;
    ctl.focusNext = ".suit-picker [data-suit]";
    ctl.render();
    document.querySelector(".suit-picker")?.scrollIntoView({ block: "nearest" });
    return;
  }
  const action = { type: "play", cards: sel };
  if (suit) action.suit = suit;
  const view = ctl.view;
  const r = await act(ctl, action, (f) => refusalText(f.code, sel, view));
  if (r && r.info && r.info.reordered) {
    addLog(ctl, `고른 순서로는 낼 수 없어 ${r.info.order.map(ocName).join(" → ")} 순서로 냈어요.`, "info");
    ctl.render();
  }
}

async function pressOneCard(ctl) {
  const r = await ctl.act({ type: "one_card" });
  if (r && r.info && r.info.ignored) {
    addLog(ctl, r.info.ignored === "late_press" ? "버튼이 사라진 뒤에 눌러 넘어갔어요." : "헛원카드는 한 턴에 한 번만 해요.", "info");
    ctl.render();
  }
}

/** The log is built from events: a whole view (a new tab, a resume that
 * could not replay) skips some. It brings the seat's last events
 * (`recent`, docs/websocket.md `view`), so the log shows those; where even
 * they do not reach back to what this tab logged last, it says so once. */
export function onWholeView(ctl, f) {
  if (f.view?.finished || ctl.replay) return;
  const st = ctl.tableState;
  if (!st.log) st.log = logSoFar(ctl);
  // the attack on the table now, for the log's next lines (a block right
  // after a reload went unsaid: review)
  st.said = { ...st.said, pending: f.view?.pending || 0 };
  const seq = typeof f.game_seq === "number" ? f.game_seq : null;
  const upTo = (f.recent || []).filter((e) => seq === null || e.game_seq <= seq);
  // the pile shows the last play whole, after any reload (one that missed
  // nothing returned before this: only its top card showed; trial finding)
  st.lastPlay = lastPlayIn(upTo.map((e) => e.event).filter(Boolean)) || st.lastPlay;
  const had = store.get(`logseq.${ctl.id}`, -1); // the last event this tab logged (-1: none)
  // a reload that missed nothing: the log already ends at the view's last event
  if (seq !== null && had >= seq) return;
  if (seq !== null) store.set(`logseq.${ctl.id}`, seq);
  const recent = upTo.filter((e) => e.game_seq > had);
  // missed: what lies between the log's end and the first event brought (a
  // new game's first event is game_seq 1)
  const from = recent.length ? recent[0].game_seq : (seq ?? Infinity) + 1;
  if (from > Math.max(had, 0) + 1 && st.log[st.log.length - 1]?.kind !== "gap") {
    addLog(ctl, st.log.length ? "… 이 창에서 보지 못한 진행은 건너뛰었어요."
      : recent.length ? "… 그 앞의 진행은 건너뛰었어요." : "… 이 창에서는 지금부터 진행을 보여 줘요.", "gap");
  }
  const events = recent.map((e) => e.event).filter(Boolean);
  for (const line of linesOf(ctl, events)) addLog(ctl, line.text, line.kind);
}

/** Log lines of events as the seat shown got them. */
function linesOf(ctl, events) {
  const name = (s) => seatName(ctl, s);
  const said = {};
  return events.map((ev) => logLine(ev, name, ctl.seat(), said)).filter(Boolean);
}

/** The last play among events, as the pile shows it (null: none). */
function lastPlayIn(events) {
  const ev = [...events].reverse().find((e) => e.type === "played");
  return ev ? { cards: ev.cards } : null;
}

/** A live table's log is what this tab saw, kept for a reload; a replay's is
 * read from the record's events up to the step shown (never the live one's). */
function logSoFar(ctl) {
  if (!ctl.replay) return store.get(logKey(ctl), []);
  return linesOf(ctl, ctl.eventsSoFar()).slice(-30);
}

/** The tab's log of a game kept apart for watching it: a player who left
 * and watched it on saw the log of when they played, its later moves
 * missing, unsaid (trial finding). */
function logKey(ctl) { return `${ctl.spectator ? "watchlog" : "log"}.${ctl.id}`; }

function addLog(ctl, text, kind = "") {
  if (ctl.replay) return;
  const st = ctl.tableState;
  if (!st.log) st.log = logSoFar(ctl);
  st.log.push({ text, kind });
  if (st.log.length > 30) st.log.shift();
  store.set(logKey(ctl), st.log);
}

function results(ctl) {
  const v = ctl.view;
  const me = ctl.seat();
  const winner = (v.winners || [])[0] ?? null;
  let title;
  if (v.ended_by === "time_cap") title = "30분이 지나 승부 없이 끝났어요.";
  // a replay from another seat says whose win it was, not "이겼어요!" (trial finding)
  else if (isMine(ctl, winner) && botTookOver(v, me)) {
    title = "내 자리를 이어받은 봇이 이겼어요."; // not my win: I left (a loss for my rating)
  } else if (isMine(ctl, winner)) title = "이겼어요!";
  // another's seat a bot finished: said, as 줄줄이 벌점 marks such a winner (trial nitpick)
  else if (winner !== null && botTookOver(v, winner)) title = `${seatName(ctl, winner)} 자리의 봇이 이겼어요.`;
  else if (winner !== null) title = `${josa(seatName(ctl, winner), "이/가")} 이겼어요.`;
  else title = noWinnerTitle(v);
  const rows = [];
  const seats = [...Array(seatCount(v)).keys()].filter((s) => inGame(v, s));
  for (const s of standingOrder(v, seats)) {
    rows.push(h("tr", { class: [isWinner(v, s) ? "win" : "", isMine(ctl, s) ? "me" : ""].join(" ").trim() },
      // my row stands out, and a seat a bot finished is marked whatever its
      // end, as 줄줄이 벌점's and Hakka's (only a bot's win was: trial finding)
      h("td", {}, seatName(ctl, s), meMark(ctl, s), tookOverMark(v, s)),
      h("td", {}, isWinner(v, s) ? "승리"
        : isOut(v, s) ? "탈락" : `${handCount(v, s)}장 남음`)));
  }
  // why I am out, said here (RULES.md 1.8): the toast saying it came over
  // this panel's heading when my elimination ended the game (UX audit)
  const whyOut = me !== null && isOut(v, me) && !ctl.replay ? h("p.muted", {}, OUT_LINE) : null;
  return resultsPanel(ctl, [h("p.result-title", {}, title), whyOut,
    h("table.scores", {}, h("tbody", {}, rows))], "게임 결과");
}

/** What may answer the attack, as the table stands (RULES.md 1.5): nothing
 * passes a 컬러 조커 (it said "공격 카드로 넘기거나 …": 원카드 audit); a
 * chain of 2s only may also be blocked with a 3 of the current suit. */
function defence(v) {
  if (v.top === "CJ") return "컬러 조커는 넘길 수도 막을 수도 없어요. ";
  return v.twos_only ? "공격 카드로 넘기거나, 같은 무늬 3으로 막거나, " : "공격 카드로 넘기거나 ";
}

// -- the [원카드!] window, over every screen -----------------------------------
let floatTimer = null;
function updateFloat(ctl) {
  const el = document.getElementById("onecard-float");
  const st = ctl.tableState;
  const v = ctl.view;
  const me = ctl.seat();
  if (!st.window && v?.window && !st.sawEvents) {
    // after a reload: the view says a window is open
    const until = ctl.at(v.window.closes_at);
    if (until) st.window = { holder: v.window.holder, until };
  } else if (st.window && v?.window && v.window.holder === st.window.holder) {
    // the view's close time wins: a pause (every player away, RULES.md 4)
    // holds the window open and moves its close time on, and no event says so
    const until = ctl.at(v.window.closes_at);
    if (until) st.window.until = until;
  }
  const w = st.window;
  const open = w && clock.serverNow() < w.until && !v?.finished && me !== null && !isOut(v, me)
    && !botTookOver(v, me);
  if (!open) {
    const had = el.contains(document.activeElement);
    el.hidden = true;
    el.replaceChildren();
    const table = document.querySelector("section.table");
    if (had && table && !focusHome(table)) table.querySelector('[data-act="play"]')?.focus();
    return;
  }
  const holder = w.holder === me ? "내가 한 장 남았어요! 먼저 눌러요." : `${josa(seatName(ctl, w.holder), "이/가")} 한 장 남았어요!`;
  const opening = el.hidden;
  mount(el, h("div.float-inner", {},
    h("p", {}, holder),
    button("원카드!", () => { st.window = null; updateFloat(ctl); pressOneCard(ctl); }, { class: "onecard-btn big", dataset: { act: "one_card_float" } }),
    h("span.timer", { dataset: { deadline: String(w.until), total: "3000" }, "aria-hidden": "true" }, h("span.secs"), "초", h("span.bar", {}, h("i")))));
  el.hidden = false;
  if (opening) {
    // 3 s to press: said at once, and the keyboard is put on the button
    // (it was 11 Tabs away, last on the page: a11y trial)
    say(`${holder} 원카드! 버튼을 눌러요.`, true);
    // not from my own turn's cards and buttons when another's card is the
    // one left: an Enter meant for [카드 내기] pressed 원카드! (a11y audit)
    const busy = w.holder !== me && v.turn === me && document.activeElement?.closest?.("section.table");
    if (!busy) el.querySelector("button")?.focus({ preventScroll: true });
  }
  clearTimeout(floatTimer);
  floatTimer = setTimeout(() => updateFloat(ctl), Math.max(50, w.until - clock.serverNow() + 20));
}

export function onEvent(ctl, ev, frame) {
  const st = ctl.tableState;
  const name = (s) => seatName(ctl, s);
  const me = ctl.seat();
  st.sawEvents = true;
  const line = logLine(ev, name, me, st.said || (st.said = {}));
  if (line) addLog(ctl, line.text, line.kind);
  // how far this tab's log goes (a reload's whole view may add nothing to it)
  if (typeof frame?.game_seq === "number" && !ctl.replay) store.set(`logseq.${ctl.id}`, frame.game_seq);
  switch (ev.type) {
    case "played":
      st.lastPlay = { cards: ev.cards };
      break;
    case "one_card_window": {
      const until = ctl.at(ev.closes_at) ?? clock.serverNow() + 3000;
      st.window = { holder: ev.holder, until };
      break;
    }
    case "one_card_window_closed":
    case "game_ended":
      st.window = null;
      break;
    case "one_card":
      st.window = null;
      // a catch says who pays (it read as the presser's own 원카드!, and
      // the one caught saw nothing of the cards they got: UX audit)
      if (!ev.penalty) bigToast(`원카드! — ${name(ev.seat)}`);
      else if (ev.holder === me) bigToast(`원카드! ${josa(name(ev.seat), "이/가")} 먼저 눌러 내가 ${ev.penalty}장을 받아요.`, "warn");
      else bigToast(`원카드! ${ev.seat === me ? "내가" : josa(name(ev.seat), "이/가")} 먼저 눌러 ${josa(name(ev.holder), "이/가")} ${ev.penalty}장을 받아요.`);
      break;
    case "false_call":
      bigToast(`헛원카드! ${josa(name(ev.seat), "이/가")} 1장을 받아요.`, "warn");
      break;
    case "eliminated":
      if (ev.seat === me) {
        // "구경해요" only while two or more still play (out of two, the game
        // is over: the result follows; trial finding)
        const v = ctl.view || {};
        const out = new Set([...(v.eliminated || []), me]);
        let left = 0;
        for (let s = 0; s < seatCount(v); s++) if (seatPlays(v, s) && !out.has(s)) left += 1;
        // (out of two, the game is over: its result says it, under no toast)
        if (left > 1) bigToast(`${OUT_LINE} 남은 게임을 구경해요.`, "warn");
      }
      break;
    default:
      break;
  }
  if (ctl.view) updateFloat(ctl);
}

/** A big toast for a moment of the game (원카드!, 헛원카드!, 탈락), said
 * as it shows (role=status); not ui.announce, which only speaks. */
function bigToast(text, kind = "announce") {
  // the table's own news: not over the lobby, where the game goes on
  // unseen (autopilot's 원카드! came there for 3 s each: trial nitpick)
  if (!document.querySelector("section.table")) return;
  const box = document.getElementById("toasts");
  const el = h("div.toast.big", { class: kind, role: "status" }, text);
  box.append(el);
  setTimeout(() => el.remove(), 3000);
}
