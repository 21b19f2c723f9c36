// Hakka table (RULES.md 3, seed 004): dealer, dreamer and privileged player
// marked, [콜]/[패스], the Elder stars (★) moving as cards are played, leading
// and beating or discarding face down, tricks per player, the claim and the
// scoring with the dreamer's reveal, and the four hands (4판) of a game.
import { josa, num, signed, scoreText } from "./state.js";
import { h, mount, button, toast } from "./ui.js";
import { hkCard, hkName, hkParse, hkSort, cardBack, selectionAfter, HK_SUITS, HK_SUIT_NAME } from "./cards.js";
import { gameHeader, timerEl, dockTimer, refusalBox, autopilotBar, resultsPanel, seatBadges, takenOverBar, meMark, isMine,
  tookOverMark, winnersTitle, aboveDock, dockCovers } from "./game.js";
import { seatCount, onAutopilot, handCount, botTookOver } from "./seats.js";

// the seed's words (단일 카드, 우승 카드, 모양: seeds/004)
const KIND = { single: "단일 카드", run: "런", set: "세트", discard: "엎어서 버림" };

/** Local shape check for the preview only; the server decides. */
export function classify(cards) {
  if (!cards.length) return null;
  if (cards.length === 1) return "single";
  const p = cards.map(hkParse);
  if (cards.length >= 3 && p.every((c) => c.num === p[0].num)) return "set";
  if (cards.length >= 3 && p.every((c) => c.suit && c.suit === p[0].suit)) {
    const nums = p.map((c) => c.num).sort((a, b) => a - b);
    if (nums.every((n, i) => i === 0 || n === nums[i - 1] + 1)) return "run";
  }
  return null;
}

function name(ctl, s) { return ctl.names()[s] || `${s + 1}번`; }

/** A seat as the subject: "내가" for my own, as One Card's "내 차례예요."
 * (the table named me by my nickname: "민지폰이 리드할 차례예요.": trial) */
function who(ctl, s) {
  // my seat played by the bot that took it over does not do it as me (a
  // replay of a game I left said "내가 6트릭으로 판을 이겼어요": replay audit)
  if (isMine(ctl, s)) return botTookOver(ctl.view, s) ? "내 자리의 봇이" : "내가";
  return josa(name(ctl, s), "이/가");
}

/** A trick's play, after "내가 트릭을 가져갔어요:": mine is "나" (it named
 * me by my nickname right after "내가": trial). */
function playText(ctl, p) {
  return `${isMine(ctl, p.seat) ? (botTookOver(ctl.view, p.seat) ? "내 자리의 봇" : "나") : name(ctl, p.seat)} ${p.cards ? p.cards.map(hkName).join("·") : `엎음 ${p.discarded}장`}`;
}

// three passes: the hand is dealt again (RULES.md 3.3; only the cards
// changing said so: UX audit) — a toast at a live table, a line in a replay
const VOID_DEAL = "모두 패스해서 이번 판은 무효예요. 카드를 다시 나눠요.";

/** A replay's step that dealt again after three passes (its view is the
 * new deal's: the third 패스 and the deal again went unsaid: replay audit). */
function replayedVoidDeal(ctl) {
  return !!ctl.replay && (ctl.stepEvents?.() || []).some((e) => e.type === "void_deal");
}

/** What happened last at the table, in words: the newest play of the
 * trick, else the trick just taken, else the newest 콜/패스. Said to a
 * screen reader as the other tables' newest log line is (a Hakka table
 * said whose turn it was, never what was played or called). */
function lastLine(ctl, v) {
  const t = v.table || [];
  if (v.phase === "scoring" || v.finished) return "";
  if (replayedVoidDeal(ctl)) return VOID_DEAL;
  if (t.length) {
    const p = t[t.length - 1];
    return p.kind === "discard" ? `${name(ctl, p.seat)}: ${p.count}장 엎어서 버림`
      : `${name(ctl, p.seat)}: ${t.length === 1 ? "리드 " : ""}${KIND[p.kind] || p.kind} ${p.cards.map(hkName).join("·")}`;
  }
  if (v.last_trick) {
    return `${who(ctl, v.last_trick.winner)} 트릭을 가져갔어요: `
      + (v.last_trick.plays || []).map((p) => playText(ctl, p)).join(", ");
  }
  const c = (v.calls || [])[(v.calls || []).length - 1];
  return c ? `${name(ctl, c.seat)}: ${c.call ? "콜" : "패스"}` : "";
}

export function render(ctl, root) {
  const v = ctl.view;
  const st = ctl.tableState;
  if (!st.sel) st.sel = [];
  const hand = v.hand || [];
  st.sel = st.sel.filter((c) => hand.includes(c));
  const me = ctl.seat();
  const elders = new Set(v.elders || []);
  // not once a bot plays my seat; a replay is read-only (it showed live
  // buttons and "…꺾거나 엎어서 버려요": trial finding)
  // nor while 자동 진행 plays it (RULES.md 3.9: until [직접 하기]; 콜/패스 and
  // a turn line asked me to act, and the bot's move took the cards I was
  // picking: UX audit)
  const auto = me !== null && onAutopilot(v, me);
  const myTurn = !ctl.replay && !v.finished && v.turn === me && me !== null && !botTookOver(v, me) && !auto;
  const leading = v.phase === "playing" && (v.table || []).length === 0;
  const size = leading ? 0 : (v.table?.[0]?.cards?.length || v.table?.[0]?.count || 0); // to follow with

  const head = gameHeader(ctl, [
    h("span.round", {}, `${Math.min(v.round, v.hands_total || 4)}/${v.hands_total || 4}판`),
    PHASES[v.phase] ? h("span.badge.phase", {}, PHASES[v.phase]) : null,
  ]);

  // the seats in counter-clockwise turn order starting with me
  const n = seatCount(v) || 4;
  const order = [];
  for (let i = 0; i < n; i++) order.push((((me ?? 0) - i) % n + n) % n);
  const seats = h("ol.hk-seats", {}, order.map((s) => {
    const call = (v.calls || []).find((c) => c.seat === s);
    return h("li.hk-seat", { class: [s === me ? "me" : "", v.turn === s ? "turn" : "", s === v.dreamer ? "dreamer" : ""].join(" "), dataset: { seat: s } },
      h("span.name", {}, name(ctl, s), meMark(ctl, s)),
      s === v.dealer ? h("span.badge.dealer", { title: "딜러" }, "딜러") : null,
      s === v.dreamer ? h("span.badge.dreamer", { title: "드리머: 이번 판은 쉬어요" }, "드리머") : null,
      s === v.privileged ? h("span.badge.priv", { title: "특별 플레이어" }, "특별 플레이어") : null,
      call ? h("span.badge", {}, call.call ? "콜" : "패스") : null,
      v.turn === s ? h("span.badge.turn", {}, "차례") : null,
      seatBadges(ctl, s),
      h("span.stats", {},
        // no-break spaces: a narrow box breaks at " · " only ("점수" and a lone "0" at 360 px: trial nitpick)
        s === v.dreamer ? [cardBack({ class: "mini" }), "\u00a01장"] : `손패\u00a0${handCount(v, s)}장`,
        s === v.dreamer ? "" : ` · 트릭\u00a0${v.tricks?.[s] ?? 0}`,
        ` · 점수\u00a0${num(v.scores?.[s] ?? 0)}`),
      v.turn === s ? timerEl(ctl, v.deadline, v.turn_ms) : null);
  }));

  const elderRow = h("p.elders", {}, h("span.star", {}, "★"), " 상위 카드: ",
    (v.elders || []).map((c) => h("span.elder-chip", { dataset: { card: c } }, hkName(c))));

  const tableEl = h("div.hk-table", { "aria-label": "테이블" },
    (v.table || []).length
      ? (v.table || []).map((p, i) => h("div.play", { class: v.best === p.seat ? "best" : "", dataset: { seat: p.seat } },
        // mine marked (나), as my seat's box (my nickname alone, beside 지난
        // 트릭's "나": 하카 audit)
        h("span.who", {}, `${name(ctl, p.seat)}${meMark(ctl, p.seat)} · ${i === 0 ? "리드 " : ""}${KIND[p.kind] || p.kind}`),
        h("span.cards", {}, p.kind === "discard"
          ? Array.from({ length: p.count }, () => cardBack())
          : p.cards.map((c) => hkCard(c, false, { shown: true }))),
        v.best === p.seat ? h("span.badge.win", {}, "가장 높음") : null))
      : h("p.muted", {}, v.phase === "calling" ? (replayedVoidDeal(ctl) ? `${VOID_DEAL} ` : "") + "콜하기 중이에요."
        : v.phase === "playing" ? `${who(ctl, v.leader)} 리드할 차례예요.` : ""),
    v.last_trick && !(v.table || []).length ? h("p.last-trick", {},
      `지난 트릭: ${who(ctl, v.last_trick.winner)} 가져감 — `,
      (v.last_trick.plays || []).map((p) => playText(ctl, p)).join(", ")) : null);

  let status;
  if (v.finished) status = "게임이 끝났어요.";
  // (a replay tells no "곧": the next step is the deal: replay audit)
  else if (v.phase === "scoring") status = ctl.replay ? "판이 끝났어요." : "판이 끝났어요. 곧 다음 판을 나눠 줘요.";
  // whose turn it is meanwhile ("쉬어요" alone: UX audit); what my card
  // is for in a hint below, not read out again at every turn
  else if (me === v.dreamer) {
    status = "이번 판은 드리머예요." + (v.turn !== null && v.turn !== undefined ? ` ${name(ctl, v.turn)}의 차례예요.` : "");
  }
  else if (v.turn === me && me !== null && botTookOver(v, me)) status = "봇이 내 자리에서 하는 차례예요.";
  else if (v.turn === me && auto && !ctl.replay) status = "자동 진행이 내 차례를 대신하고 있어요.";
  else if (myTurn && v.phase === "calling") status = "콜 또는 패스를 골라요.";
  // the single's rule said before a refusal says it, for this hand (RULES.md
  // 3.6: a non-Elder card of my highest suit among them, any Elder when I
  // have only Elders or am the privileged player; UX audit)
  else if (myTurn && leading) {
    const top = HK_SUITS.find((s) => hand.some((c) => !elders.has(c) && hkParse(c).suit === s));
    const single = !top ? "아무 상위 카드" : me === v.privileged ? `${HK_SUIT_NAME[top]} 카드나 상위 카드` : `${HK_SUIT_NAME[top]} 카드`;
    status = `리드할 차례예요: 단일 카드(${single}), 런 또는 세트를 내요.`;
  }
  else if (myTurn) status = `테이블의 가장 높은 패턴을 꺾거나 ${size || ""}장을 엎어서 버려요.`;
  // (a replay of my seat: "내 차례예요.", not my nickname's: 하카 audit)
  else if (v.turn !== null && v.turn !== undefined) status = isMine(ctl, v.turn) ? "내 차례예요." : `${name(ctl, v.turn)}의 차례예요.`;
  else status = "";

  const kind = classify(st.sel);
  // (always there while I may pick: a line that came with the first card
  // moved the buttons and the hand under the finger)
  // following, a pick of another size can neither beat nor be discarded
  // (RULES.md 3.6: as many cards as the lead; it said "엎어서 버리기만 돼요")
  const what = kind ? KIND[kind] + (kind === "single" ? "" : ` ${st.sel.length}장`) : "패턴이 아니에요";
  // said as the pick changes (a reader built runs and sets blind: a11y audit)
  const preview = st.sel.length ? h("p.effect", { dataset: { say: "effect" } }, `${st.sel.map(hkName).join(" · ")} — ${what}${
    size && st.sel.length !== size ? ` (${size}장을 골라야 꺾거나 엎어서 버릴 수 있어요)` : !kind && size ? " (엎어서 버리기만 돼요)" : ""}`)
    : myTurn && v.phase === "playing" ? h("p.effect", { "aria-hidden": "true" }) : null;

  let hint = me !== null && me === v.dreamer && v.phase !== "scoring" && !v.finished
    ? h("p.hint.dreamer-hint", {}, "드리머는 콜하기와 플레이에 참여하지 않아요. 판이 끝나면 엎어 둔 내 카드를 공개해, "
      + "5트릭에 더해 우승 카드 중 내 카드와 숫자가 같은 카드마다 1트릭씩 더 받아요. 6트릭 이상이면 점수를 받아요.")
    : null;
  let buttons = null;
  if (myTurn && v.phase === "calling") {
    const dealer = me === v.dealer;
    hint = h("p.hint.call-hint", { dataset: { hint: "call" } },
      h("strong", {}, "콜"), dealer
        ? ": 이 판을 이기러 나서요. 딜러가 콜하면 다음 판도 딜러를 할 수 있어요. "
        : ": 이 판을 이기러 나서요. 특별 플레이어가 되어 상위 카드를 언제든 리드할 수 있지만, 판을 못 이기면 다른 사람 몫까지 혼자 점수를 내요. ",
      h("strong", {}, "패스"), ": 다음 사람에게 넘겨요. 세 명 모두 패스하면 다시 나눠요.");
    buttons = h("div.hk-actions", {},
      button("패스", () => ctl.act({ type: "pass" }), { dataset: { act: "pass" } }),
      button("콜", () => ctl.act({ type: "call" }), { class: "primary", dataset: { act: "call" } }));
  } else if (myTurn && v.phase === "playing") {
    // a pick that cannot be played (not a pattern) or of another size than
    // the lead's is not offered (the preview says why; the engine's pattern
    // check and this one are tested alike: test_web_client_js.py)
    const wrongSize = !!size && st.sel.length !== size;
    buttons = h("div.hk-actions", {},
      leading ? null : button("엎어서 버리기", () => send(ctl, "discard"), { disabled: !st.sel.length || wrongSize, dataset: { act: "discard" } }),
      button(leading ? "리드하기" : "꺾기", () => send(ctl, "play"), { class: "primary", disabled: !st.sel.length || !kind || wrongSize, dataset: { act: "play" } }));
  }

  const handEl = h("div.hand.hk-hand", { role: "group", "aria-label": "내 손패", dataset: { focusHome: "" } }, hkSort(hand).map((c) => hkCard(c, elders.has(c), {
    class: st.sel.includes(c) ? "selected" : "", "aria-pressed": String(st.sel.includes(c)), disabled: v.finished || ctl.replay || auto,
    onclick: () => { const i = st.sel.indexOf(c); if (i >= 0) st.sel.splice(i, 1); else st.sel.push(c); ctl.render(); } })));

  const discards = (v.my_discards || []).length
    ? h("p.muted.my-discards", {}, `내가 엎어서 버린 카드: ${v.my_discards.map(hkName).join(", ")}`) : null;

  mount(root, h("section.table.hk", { dataset: { game: "hakka", phase: v.phase } },
    head, v.finished ? results(ctl) : null,
    v.last_hand && (v.phase === "scoring" || v.finished) ? handResult(ctl, v.last_hand) : null,
    takenOverBar(ctl), autopilotBar(ctl, me !== null && onAutopilot(v, me)),
    seats, elderRow, tableEl,
    // for sayChanges only (aria-hidden: the table above shows the same to a reader who looks)
    h("p.visually-hidden", { dataset: { say: "log" }, "aria-hidden": "true" }, lastLine(ctl, v)),
    h("p.oc-status", { dataset: { say: "status" } }, status, myTurn ? [" ", timerEl(ctl, v.deadline, v.turn_ms, true)] : null),
    // the call's explanation above; the buttons and the hand stay at the
    // bottom of the screen while the table scrolls (on a 360×740 phone they
    // were below the fold when following a lead: trial finding); a refusal
    // shows over the table right above them (app.css)
    hint,
    // not while a hand's result shows: its score table was under the docked
    // hand on a phone, for its few seconds (trial finding)
    h("div.table-dock.hk-dock", { class: me !== null && me !== v.dreamer && !botTookOver(v, me) && !v.finished && !ctl.replay && hand.length && v.phase !== "scoring" ? "docked" : "" },
      // no hand of mine when the view has none (a bot took my seat: the
      // spectator's share; an empty "내 손패" stood there: review nitpick)
      // my turn's time in a phone's dock too, as 줄줄이 벌점's: the line above
      // went under the dock when a pick's preview took two lines, and no time
      // showed anywhere (하카 audit); app.css shows it where docked
      refusalBox(), preview, myTurn ? dockTimer(ctl, v.deadline, v.turn_ms) : null, buttons, v.hand ? handEl : null),
    discards));
  // my turn to follow: the play to beat, and the line under the table that
  // says what to do with the turn's time, are brought above the dock when
  // they are under it (on a small phone the table's later plays were; at
  // 390×844 the line took two and its 30초 was under the hand: trial
  // findings), the play to beat not past the top bar; once a turn
  const turnKey = myTurn && v.phase === "playing" && !leading ? `${v.round}:${(v.table || []).length}:${v.best}` : null;
  if (turnKey && st.shownTurn !== turnKey) {
    st.shownTurn = turnKey;
    const best = root.querySelector(".hk-table .play.best");
    const dock = root.querySelector(".hk-dock.docked");
    const line = root.querySelector(".oc-status");
    if (best && dockCovers(dock, best)) {
      const dockTop = dock.getBoundingClientRect().top;
      const barBottom = document.querySelector(".topbar")?.getBoundingClientRect().bottom || 0;
      const b = best.getBoundingClientRect();
      const need = b.bottom + 8 - dockTop; // the play to beat
      const want = line ? line.getBoundingClientRect().bottom + 8 - dockTop : need;
      const by = Math.max(need, Math.min(want, b.top - barBottom));
      if (by > 0) window.scrollBy(0, by);
    }
  }
  // my call: what 콜 and 패스 mean (the privileged player's risk), my lead:
  // the line saying what may be led and its seconds, above the dock, the
  // turn line not past the top bar; once a turn (at 360×640 the dock
  // covered all but the buttons: UX audit)
  const tricks = (v.tricks || []).reduce((a, b) => a + b, 0);
  const lineKey = myTurn && v.phase === "calling" ? `${v.round}:${v.dealer}:call`
    : myTurn && leading ? `${v.round}:${tricks}:lead` : null;
  if (lineKey && st.shownTurn !== lineKey) {
    st.shownTurn = lineKey;
    const line = root.querySelector(".oc-status");
    const what = v.phase === "calling" ? root.querySelector(".call-hint") : line;
    if (what && line) aboveDock(what, root.querySelector(".hk-dock.docked"), line);
  }
}

async function send(ctl, type) {
  const st = ctl.tableState;
  const sent = [...st.sel];
  const r = await ctl.act({ type, cards: sent });
  if (r) st.sel = selectionAfter(sent, st.sel);
}

// the seed's names of a hand's stages (it said 플레이, and nothing while
// the hand was scored: 하카 audit)
const PHASES = { calling: "콜하기", playing: "플레이하기", scoring: "점수 매기기" };

function handResult(ctl, lh) {
  const won = lh.winner !== null && lh.winner !== undefined;
  // the dreamer's card pops in once, not again at each redraw of the table
  // (caught half-faded while watching and in replays: replay audit)
  const st = ctl.tableState;
  const popIn = st.poppedHand !== lh.round;
  st.poppedHand = lh.round;
  const how = { claim: "트릭과 상위 카드가 6 이상", five_tigers: "5마리 호랑이" }[lh.how] || lh.how; // (a won hand's)
  return h("section.hand-result", { "aria-label": "판 결과" },
    h("h2", {}, `${lh.round}판 결과`),
    // said as the hand's last line (its last trick ends the hand unsaid)
    !won
      ? h("p", { dataset: { say: "log" } }, "이번 판은 점수 없이 끝났어요.")
      : h("p.hand-winner", { dataset: { say: "log" } }, `${who(ctl, lh.winner)} ${lh.tricks}트릭으로 판을 이겼어요 (${how}).`),
    // who paid what, right under who won: at 360×640 the table was below
    // the fold for the whole 5 s the result shows (하카 audit); how it came
    // about below it
    h("table.scores", {}, h("thead", {}, h("tr", {}, h("th", {}, "이름"), h("th.num", {}, "이번 판"), h("th.num", {}, "누적"))),
      h("tbody", {}, [0, 1, 2, 3].map((s) => h("tr", { class: isMine(ctl, s) ? "me" : "" }, h("td", {}, name(ctl, s), meMark(ctl, s)),
        h("td.num", {}, signed(lh.deltas[s])), h("td.num", {}, num(lh.scores[s])))))),
    trickNote(ctl, lh),
    lh.winning_cards?.length ? h("p.cards-line", {}, "우승 카드: ", lh.winning_cards.map((c) => hkCard(c, (lh.elders || []).includes(c), { shown: true, class: "small" }))) : null,
    // a hand nobody won scores nothing (RULES.md 3.7): no dreamer's tricks,
    // no privileged player who pays (it said both: UX audit)
    h("p.dreamer-reveal", {}, isMine(ctl, lh.dreamer) ? "내 카드(드리머) 공개: " : `드리머 ${name(ctl, lh.dreamer)}의 카드 공개: `, hkCard(lh.dreamer_card, false, { shown: true, class: popIn ? "small pop-in" : "small" }),
      won ? ` → ${lh.dreamer_tricks}트릭${lh.dreamer_tricks >= 6 ? " (점수를 받아요)" : ""}` : ""),
    won && lh.privileged !== null && lh.privileged !== undefined && lh.privileged !== lh.winner ? h("p.muted", {}, `특별 플레이어 ${josa(name(ctl, lh.privileged), "이/가")} 판을 이기지 못해 혼자 점수를 내요.`) : null);
}

/** RULES.md 3.7: the claim counts tricks won plus the Elders held, so the
 * seat's "트릭 4" and the result's "6트릭" differ: say how they add up. */
function trickNote(ctl, lh) {
  const v = ctl.view;
  if (lh.how !== "claim" || lh.winner === null || lh.winner === undefined) return null;
  const won = lh.round === v.round ? v.tricks?.[lh.winner] : undefined;
  if (typeof won !== "number" || won >= lh.tricks) return null;
  return h("p.muted.trick-note", {},
    `딴 트릭 ${won} + 손에 든 상위 카드 ${lh.tricks - won}장 = ${lh.tricks}트릭 (상위 카드는 판을 이길 때 트릭으로 쳐요)`);
}

function results(ctl) {
  const v = ctl.view;
  const w = v.winners || [];
  const title = v.ended_by === "time_cap" ? "45분이 지나 승자 없이 끝났어요." : winnersTitle(v, (s) => name(ctl, s));
  const order = [0, 1, 2, 3].sort((a, b) => v.scores[b] - v.scores[a]);
  return resultsPanel(ctl, [h("p.result-title", {}, title),
    h("table.scores", {}, h("tbody", {}, order.map((s) => h("tr", { class: [w.includes(s) ? "win" : "", isMine(ctl, s) ? "me" : ""].join(" ").trim() },
      h("td", {}, name(ctl, s), meMark(ctl, s), tookOverMark(v, s)), h("td.num", {}, scoreText("hakka", v.scores[s]))))))]);
}

/** What the game did for me at my deadline (RULES.md 3.9), said by the
 * move that follows my `timeout` (nothing told the player but the table
 * moving on: trial nitpick); a frame of events missed while away says it
 * too, its view being from before them all. */
const MY_TIMEOUT = {
  passed: () => "시간이 지나 자동으로 패스했어요.",
  // the lowest single I may lead, named (not "the lowest card": 섭 5 led
  // while 곤 1 was in hand read as a misplay: UX audit)
  played: (ev) => `시간이 지나 자동으로 냈어요: ${(ev.cards || []).map(hkName).join(", ")}`,
  discarded: (ev) => `시간이 지나 가장 낮은 카드 ${ev.count}장을 자동으로 엎어서 버렸어요.`,
};

export function onEvent(ctl, ev) {
  const st = ctl.tableState;
  if (ev.type === "dealt" || ev.type === "trick_won") st.sel = [];
  if (ev.type === "timeout") st.timedOut = isMine(ctl, ev.seat);
  else if (st.timedOut && ev.seat === ctl.seat() && MY_TIMEOUT[ev.type]) {
    st.timedOut = false;
    // on the table only (the game's news over the lobby: trial nitpick)
    if (document.querySelector("section.table")) toast(MY_TIMEOUT[ev.type](ev));
  }
  if (ev.type === "void_deal" && document.querySelector("section.table")) toast(VOID_DEAL);
}
