// 줄줄이 벌점 table (RULES.md 2, seed 002): four rows in fixed positions,
// every card with its number and "벌점 N", hand + row selection with the
// placement preview, the [58 → 2번 줄 확정] button, others' 확정 markers, the
// shared countdown, the reveal of every pick and the one-by-one placement,
// rows taken, round and total penalties, the end-mode badge, the round
// summary and the results with ties. Nothing says which row is best.
import { josa } from "./state.js";
import { h, mount, button } from "./ui.js";
import { prCard, prPenalty } from "./cards.js";
import { gameHeader, timerEl, dockTimer, refusalBox, autopilotBar, resultsPanel, over66Line, seatBadges, takenOverBar, meMark, isMine,
  tookOverMark, winnersTitle, aboveDock, dockCovers } from "./game.js";
import { placeMs } from "./anim.js";
import { onAutopilot, seatPlays, botTookOver } from "./seats.js";

// a short phone: app.css's block of the same query tightens the rows there
// (and a phone on its side: app.css, the dock at the right)
const SHORT_PHONE = "(max-width: 719px) and (max-height: 760px), (orientation: landscape) and (max-height: 500px)";

/** Where a card would land on a row as it is now (seed: 놓는 규칙). */
export function preview(rowCards, card) {
  const end = rowCards[rowCards.length - 1];
  if (end < card && rowCards.length < 5) return { outcome: "append", position: rowCards.length + 1, penalty: 0, cards: 0 };
  const taken = rowCards;
  const penalty = taken.reduce((s, c) => s + prPenalty(c), 0);
  return { outcome: end < card ? "sixth_card" : "row_end_higher", position: 1, penalty, cards: taken.length };
}

// "(벌점 N)" is one piece: at 360 px "(벌점" ended a line, "1)." began the next (줄줄이 audit)
export function previewText(card, row, p, end) {
  // (not "끝(30) 뒤 3번째 자리에": read as the third place after 30: copy audit)
  if (p.outcome === "append") return `${josa(card, "은/는")} ${row}번 줄 끝(${end}) 뒤에 놓여 ${p.position}번째 카드가 돼요.`;
  if (p.outcome === "sixth_card") return `${row}번 줄이 이미 5장이라 ${p.cards}장을 가져가요 (벌점\u00a0${p.penalty}). ${josa(card, "이/가")} 새 첫 카드가 돼요.`;
  // "모두" only where there is more than one card to take ("1장을 모두" read oddly)
  return `${row}번 줄 끝(${end})이 ${card}보다 커서 ${row}번 줄 ${p.cards}장을 ${p.cards > 1 ? "모두 " : ""}가져가요 (벌점\u00a0${p.penalty}).`;
}

function ts(ctl) {
  const v = ctl.view;
  const key = `${v.round}.${v.turn_no}`; // turn_no: the turn of the round (`turn` is nobody's)
  // (a reveal's animation and scroll outlast its turn: the next one's draw ends them)
  if (ctl.tableState.key !== key) {
    const { anim, beforeReveal } = ctl.tableState;
    ctl.tableState = { key, turnKey: v.turn_key, card: null, row: null, anim, beforeReveal, sent: null };
  }
  const sel = v.selection;
  if (sel && ctl.tableState.card === null) { ctl.tableState.card = sel.card; ctl.tableState.row = sel.row; }
  return ctl.tableState;
}

export function render(ctl, root) {
  const v = ctl.view;
  const st = ts(ctl);
  // where the page was before the reveal scrolled its list above the dock
  // (showReveal): this draw goes back (trial finding: the page stayed
  // scrolled, the title, the turn count and the 자동 진행 banner's [직접
  // 하기] under the top bar, after every reveal on a phone), unless the
  // player scrolled since; decided before the table is drawn again (that
  // may move the scroll)
  const b = st.beforeReveal;
  const back = b && Math.abs(window.scrollY - b.to) < 2 ? b.from : null;
  st.beforeReveal = null;
  const me = ctl.seat();
  const names = ctl.names();
  const confirmedMine = me !== null && v.confirmed?.[me];
  const selecting = v.phase === "select" && !v.finished && me !== null && !confirmedMine && (v.hand || []).length > 0
    && !botTookOver(v, me) // a bot plays my seat now: nothing to pick
    && !ctl.replay; // a replay shows the seat's hand, nothing to pick
  const myAuto = me !== null && onAutopilot(v, me);

  const head = gameHeader(ctl, [
    h("span.badge.end", { title: "끝나는 방법" }, v.badge?.label || (v.badge?.end === "score_66" ? "기본 66점" : "빠른 판수")),
    h("span.round", {}, v.badge?.end === "score_66" ? `${v.round}판` : `${v.round}/${v.rounds}판`, " · ", `${v.turn_no}/${v.turns_per_round || 10}회차`),
    v.phase === "select" && !v.finished ? timerEl(ctl, v.deadline, v.select_ms) : null,
  ]);

  // five or more at the table, or three or four on a short screen: one
  // strip of seats on a phone (app.css), so the four rows stay above the
  // dock (three lines of seats hid 4번 줄 at 390×844, two lines 3번 줄 at
  // 360×740, with three seats 4번 줄's bottom under a two-line preview)
  const n = (v.seats || []).length;
  const strip = n > 4 || (n >= 3 && window.matchMedia(SHORT_PHONE).matches);
  const players = h("ol.pr-players", { class: strip ? "many" : "" }, (v.seats || []).map((s) => h("li.pr-player", {
    class: [s.seat === me ? "me" : "", v.confirmed?.[s.seat] ? "done" : ""].join(" "), dataset: { seat: s.seat } },
  h("span.name", {}, names[s.seat] || `${s.seat + 1}번`, meMark(ctl, s.seat)),
  v.confirmed?.[s.seat] && v.phase === "select" ? h("span.badge.ok", {}, "확정") : null,
  seatBadges(ctl, s.seat),
  penEl(v.round_penalties?.[s.seat] ?? 0, (v.taken?.[s.seat] || []).length, v.penalties?.[s.seat] ?? 0))));

  const rows = h("div.pr-rows", {}, (v.rows || []).map((r) => {
    const cards = r.cards.map((c) => (typeof c === "number" ? c : c.card));
    const chosen = selecting && st.row === r.row;
    const slots = [];
    for (let i = 0; i < 5; i++) {
      slots.push(cards[i] !== undefined ? prCard(cards[i], { shown: true }) : h("span.slot", { "aria-hidden": "true", title: i === 4 ? "다섯째 자리: 여기까지 찬 줄에 여섯째 카드가 오면 그 카드를 낸 사람이 줄을 가져가요" : "" }, i === 4 ? "5" : ""));
    }
    // its name says what a player decides by: the cards, the end, 장 · 벌점 (a11y trial: only "2번 줄")
    const pen = r.penalty ?? cards.reduce((s, c) => s + prPenalty(c), 0);
    // a stop for the keyboard only while it can be chosen (4 dead stops after 확정: a11y audit)
    return h("div.pr-row", { class: chosen ? "chosen" : "", role: "button", tabindex: selecting ? 0 : -1,
      "aria-pressed": String(chosen), "aria-disabled": String(!selecting),
      "aria-label": `${r.row}번 줄: ${cards.join(", ")}, 끝 ${cards[cards.length - 1]}, ${cards.length}장 벌점 ${pen}`, dataset: { row: r.row },
      onclick: () => { if (selecting && !ctl.holdRender) choose(ctl, st.card, r.row); },
      onkeydown: (e) => {
        if ((e.key === "Enter" || e.key === " ") && selecting && !ctl.holdRender) { e.preventDefault(); choose(ctl, st.card, r.row); }
      } },
    h("span.row-label", {}, `${r.row}번 줄`),
    h("span.row-cards", {}, slots),
    h("span.row-info", {}, `${cards.length}장 · 벌점 ${pen}`));
  }));

  let action = null;
  if (v.finished || ctl.replay) {
    action = null;
  } else if (v.phase === "intermission") {
    action = null;
  } else if (confirmedMine) {
    const sel = v.selection;
    // the bot's 확정 when a bot plays my seat ("확정했어요" told a player who left: trial nitpick)
    const who = botTookOver(v, me) ? "봇이 내 자리에서 확정했어요." : sel ? `${sel.card} → ${sel.row}번 줄로 확정했어요.` : "확정했어요.";
    action = h("div.pr-action", {}, h("p.muted", { dataset: { state: "confirmed", say: "status", focusRest: "" } },
      `${who} 다른 사람을 기다리고 있어요…`));
  } else if (selecting) {
    let pv = null;
    if (st.card !== null && st.row !== null) {
      const row = v.rows[st.row - 1];
      const cards = row.cards.map((c) => (typeof c === "number" ? c : c.card));
      pv = h("p.preview", { dataset: { outcome: preview(cards, st.card).outcome, say: "status" } },
        previewText(st.card, st.row, preview(cards, st.card), cards[cards.length - 1]));
    } else {
      pv = h("p.muted", { dataset: { say: "status" } }, st.card === null ? "손패에서 카드 한 장을 누르고, 놓을 줄을 눌러요." : "놓을 줄을 눌러요.");
    }
    const label = st.card !== null && st.row !== null ? `${st.card} → ${st.row}번 줄 확정` : "카드와 줄을 골라요";
    action = h("div.pr-action", {}, pv,
      button(label, () => confirmPick(ctl), { class: "primary big", disabled: st.card === null || st.row === null, dataset: { act: "confirm" } }));
  }

  const hand = h("div.hand.pr-hand", { role: "group", "aria-label": "내 손패", dataset: { focusHome: "" } }, (v.hand || []).map((c) => {
    const n = typeof c === "number" ? c : c.card;
    return prCard(n, { class: st.card === n ? "selected" : "", "aria-pressed": String(st.card === n), disabled: !selecting,
      onclick: () => choose(ctl, n, st.row) });
  }));

  const log = h("div#pr-log.pr-log", { dataset: { say: "log" } }, lastReveal(ctl, names));

  const timeLeft = v.phase === "select" && !v.finished && !ctl.replay
    ? dockTimer(ctl, v.deadline, v.select_ms, selecting) : null;
  const mine = (v.hand || []).length > 0;
  // the seat strip stays where it was swiped to: every update redraws it
  // (it went back to the start at each 확정: trial finding)
  const swiped = root.querySelector(".pr-players")?.scrollLeft || 0;
  const docked = !v.finished && (mine || timeLeft || action);
  mount(root, h("section.table.pr", { dataset: { game: "penalty_rows", phase: v.phase } },
    head, v.finished ? results(ctl, names) : null,
    v.phase === "intermission" && !v.finished ? roundSummary(ctl, names, false) : null,
    takenOverBar(ctl), autopilotBar(ctl, myAuto), players, rows, docked ? null : refusalBox(),
    // who played which card on which row, right under the rows (after the
    // dock it was below the fold on a phone while the cards went in)
    log,
    // the pick, the countdown and the hand stay at the bottom of a phone's
    // screen while the rows scroll (no scrolling down to the hand and back)
    // (only while it holds something: an empty dock would cover the rows,
    // e.g. once the game is over, or a spectator's, who has no hand)
    // (in a replay nothing is picked: it stays in the page, off the rows);
    // a refusal shows over the rows right above it (app.css)
    docked ? h("div.pr-dock", { class: ctl.replay ? "still" : "" },
      refusalBox(), timeLeft, action, mine ? [h("h2.visually-hidden", {}, "내 손패"), hand] : null) : null));
  if (swiped) players.scrollLeft = swiped;
  // a row or card the keyboard moves to is scrolled to above the sticky
  // dock, not under it (at 200 % zoom the dock is 40 % of the screen: a11y trial)
  rows.addEventListener("focusin", (e) => aboveDock(e.target, document.querySelector(".pr-dock")));
  if (back !== null) window.scrollTo(0, back);
}


async function choose(ctl, card, row) {
  const st = ctl.tableState;
  st.card = card;
  st.row = row;
  ctl.render();
  if (card !== null && row !== null) await sendSelect(ctl, st);
}

/** The server keeps the selection; what it acknowledged is in st.sent.
 * A pick is the turn's it was made on (st: that turn's table state; its
 * turn_key goes with it): once that turn is over — a pick kept while the
 * connection was down, sent when it was back — nothing more goes (a
 * [확정] pressed meanwhile sent the pick again on the next turn, and
 * confirmed it there: the first try at a test of the kept pick). */
async function sendSelect(ctl, st) {
  while (st.inflight) await st.inflight; // one select at a time
  if (over(ctl, st)) return false;
  const want = { card: st.card, row: st.row };
  const sent = st.sent || ctl.view.selection;
  if (sent && sent.card === want.card && sent.row === want.row) return true;
  st.inflight = ctl.act({ type: "select", ...want, ...onTurn(st) });
  const r = await st.inflight;
  st.inflight = null;
  if (r) st.sent = want;
  return !!r;
}

const onTurn = (st) => (Number.isInteger(st.turnKey) ? { turn_key: st.turnKey } : {});
// the turn of the pick `st` is over (the view may be ahead of the drawn table)
const over = (ctl, st) => ctl.tableState !== st || ctl.view?.turn_key !== st.turnKey;

/** [확정] sends the pick with it (selected and confirmed in one input):
 * it waited for the select's answer first, two round trips near the
 * deadline — 4.8 s on a slow network, the button still enabled (network
 * audit). But to a game whose view does not say `confirm_with_pick` (its
 * shard of an older release, during an upgrade) it still does: such a
 * shard confirmed the selection it held — another card than the one
 * picked — and wrote the pick in the record, which the next release's
 * shard replayed as picked and refused, the game stuck (version-skew audit). */
async function confirmPick(ctl) {
  const st = ctl.tableState;
  if (st.card === null || st.row === null || over(ctl, st)) return;
  if (!ctl.view?.confirm_with_pick) {
    if (!(await sendSelect(ctl, st)) || over(ctl, st)) return;
    await ctl.act({ type: "confirm", ...onTurn(st) });
    return;
  }
  const pick = { card: st.card, row: st.row };
  if (await ctl.act({ type: "confirm", ...pick, ...onTurn(st) })) st.sent = pick;
}

function lastReveal(ctl, names) {
  const v = ctl.view;
  const picks = v.last_reveal || [];
  // a new round's first turn: the last reveal was the round before's, on
  // rows dealt away since (its replay pointed at rows no longer there, the
  // live table kept an empty strip: trial finding)
  if (!picks.length || (v.phase === "select" && v.turn_no === 1)) return null;
  return h("div.reveal-summary", {}, h("h3", {}, "지난 회차 공개"),
    // a pick the game made is marked as in the reveal (it was not: trial nitpick)
    h("ul", {}, picks.map((p) => h("li", {}, placementLine(p, pickWho(ctl, names)),
      p.timeout ? [" ", h("span.badge.auto", {}, "시간 초과")] : null))));
}

export function placementLine(p, who) {
  if (p.outcome === "append") return `${who(p.seat)}: ${p.card} → ${p.row}번 줄에 이어 놓음`;
  return `${who(p.seat)}: ${p.card} → ${p.row}번 줄 ${p.cards}장 가져감 (벌점 ${p.penalty})`;
}

/** Who made a pick, my own marked (나) as the seat boxes mark it: in a
 * reveal of ten my line was found only by name (줄줄이 audit). */
function pickWho(ctl, names) {
  return (s) => `${names[s] || `${s + 1}번`}${meMark(ctl, s)}`;
}

function roundSummary(ctl, names, final) {
  const v = ctl.view;
  return h("section.round-summary", { "aria-label": "판 결과" },
    h("h2", {}, final ? "마지막 판 결과" : ctl.replay ? `${v.round}판 결과` : `${v.round}판 결과 — 곧 다음 판을 시작해요`),
    penaltyTable(ctl, names));
}

function penaltyTable(ctl, names) {
  const v = ctl.view;
  const order = (v.seats || []).map((s) => s.seat).filter((s) => seatPlays(v, s))
    .sort((a, b) => v.penalties[a] - v.penalties[b]);
  const low = Math.min(...order.map((s) => v.penalties[s]));
  let rank = 0;
  let prev = null;
  return h("table.scores", {},
    // at the game's end the round column is the last round's (beside 누적
    // 벌점, "이번 판" read as the game's: 줄줄이 audit)
    h("thead", {}, h("tr", {}, h("th", {}, "순위"), h("th", {}, "이름"),
      h("th.num", {}, v.finished ? "마지막 판" : "이번 판"), h("th.num", {}, "누적 벌점"))),
    h("tbody", {}, order.map((s, i) => {
      if (v.penalties[s] !== prev) { rank = i + 1; prev = v.penalties[s]; }
      const win = v.finished ? (v.winners || []).includes(s) : v.penalties[s] === low;
      const me = meMark(ctl, s); // my row stands out (trial nitpick)
      return h("tr", { class: [win ? "win" : "", me ? "me" : ""].join(" ") }, h("td", {}, `${rank}위`),
        h("td", {}, names[s] || `${s + 1}번`, me, v.finished ? tookOverMark(v, s) : null),
        h("td.num", {}, String(v.round_penalties?.[s] ?? 0)), h("td.num", {}, String(v.penalties[s])));
    })));
}

function results(ctl, names) {
  const v = ctl.view;
  const title = v.ended_by === "time_cap" ? "45분이 지나 승자 없이 끝났어요."
    : winnersTitle(v, (s) => names[s] || `${s + 1}번`);
  // 기본 66점: who crossed it, the game's end (nothing said why it ended: UX audit)
  const why = over66Line(v.ended_by, v.penalties, (s) => `${names[s] || `${s + 1}번`}${meMark(ctl, s)}`);
  return resultsPanel(ctl, [h("p.result-title", {}, title), why, penaltyTable(ctl, names)], "게임 결과");
}

// -- events: the reveal and the one-by-one placement --------------------------
export function onEvent(ctl, ev) {
  const names = ctl.names();
  const st = ctl.tableState || (ctl.tableState = {});
  if (ev.type === "revealed") {
    if (st.anim) st.anim.finish(); // a new reveal ends the old one
    const v = ctl.view;
    if (v && (v.round !== ev.round || v.turn_no !== ev.turn || v.phase !== "select")) {
      // the view we show is already past this turn (it came before its
      // events): nothing to animate, the summary shows the picks
      return;
    }
    ctl.hold();
    let done = false;
    const anim = { left: ev.picks.length, step: placeMs(ev.picks.length), queue: Promise.resolve(), guard: null };
    anim.finish = () => {
      if (done) return;
      done = true;
      clearTimeout(anim.guard);
      if (st.anim === anim) st.anim = null;
      ctl.release();
    };
    // never let a lost event hold the table: the screen moves on regardless
    anim.guard = setTimeout(anim.finish, anim.step * ev.picks.length + 3000);
    st.anim = anim;
    showReveal(st, ev.picks, pickWho(ctl, names), ev.picks.find((p) => isMine(ctl, p.seat)));
    if (!ev.picks.length) anim.finish();
  } else if (ev.type === "placed") {
    const a = st.anim;
    if (!a) return;
    a.queue = a.queue.then(() => animatePlacement(ctl, ev, names, a.step)).then(() => {
      a.left -= 1;
      if (a.left <= 0) a.finish();
    });
  }
}

/** What the dock says while the picks go in: my own pick the game made at
 * the deadline is said there, not only by its 시간 초과 in the list (trial:
 * "모두 확정했어요" was said even then). */
function revealLine(picks, mine) {
  if (mine?.timeout) return `시간이 지나 ${mine.card}번 카드를 ${mine.row}번 줄에 대신 냈어요. 모두의 카드를 공개해요…`;
  if (picks.some((p) => p.timeout)) return "시간이 다 됐어요. 모두의 카드를 공개해요…";
  return "모두 확정했어요. 모두의 카드를 공개해요…";
}

function showReveal(st, picks, who, mine) {
  // the turn is over: nothing of it can be clicked while the picks are placed
  for (const b of document.querySelectorAll('.pr-hand .card, .pr [data-act="confirm"]')) b.disabled = true;
  // my card is on its way to its row: not still in my hand, picked (on a
  // wide screen, where the hand stays, it did until the next turn: UX audit)
  if (mine) document.querySelector(`.pr-hand .card[data-card="${mine.card}"]`)?.classList.add("played");
  for (const r of document.querySelectorAll(".pr-row")) r.classList.remove("chosen");
  // nor does the dock go on previewing my pick or counting the turn down
  // (my 확정 the last, it said "… 놓여요." until every card was placed: trial nitpick)
  for (const t of document.querySelectorAll(".pr .dock-timer, .pr .game-head .timer")) t.remove();
  const act = document.querySelector(".pr-dock .pr-action");
  if (act) mount(act, h("p.muted", { dataset: { state: "revealing" } }, revealLine(picks, mine)));
  const log = document.getElementById("pr-log");
  if (!log) return;
  mount(log, h("div.reveal", { dataset: { state: "revealing" } }, h("h3", {}, "모두의 카드 공개"),
    h("ul.picks", {}, picks.map((p) => h("li", { dataset: { card: p.card } },
      prCard(p.card, { shown: true }), h("span", {}, `${who(p.seat)} → ${p.row}번 줄`),
      p.timeout ? h("span.badge.auto", {}, "시간 초과") : null)))));
  // the hand (nothing in it can be played now) leaves the dock while the
  // picks go in, and the list is brought above the dock: on a phone three
  // of four lines were under the hand (trial finding). The next draw of the
  // table brings the hand back.
  log.closest("section.table")?.classList.add("revealing");
  const from = window.scrollY;
  fitReveal(log.querySelector(".reveal"));
  const reveal = log.querySelector(".reveal");
  aboveDock(reveal, document.querySelector(".pr-dock"), reveal);
  st.beforeReveal = window.scrollY !== from ? { from, to: window.scrollY } : null;
}

/** The rows and the list of picks on the screen together, above the dock:
 * the list scrolls in a box of the room the rows leave (ten picks at
 * 360×640 filled the screen and pushed every row under the top bar, so no
 * card was seen landing: UX audit); at least two lines and a half. */
function fitReveal(box) {
  const ul = box?.querySelector("ul.picks");
  const rows = document.querySelector(".pr-rows");
  const dock = document.querySelector(".pr-dock");
  if (!ul || !rows || !dock) return;
  const top = document.querySelector(".topbar")?.getBoundingClientRect().bottom || 0;
  const r = rows.getBoundingClientRect();
  const b = box.getBoundingClientRect();
  const u = ul.getBoundingClientRect();
  // (a dock beside the rows takes none of their height: app.css)
  const screen = window.innerHeight - top - (dockCovers(dock, rows) ? dock.getBoundingClientRect().height : 0) - 8;
  const room = screen - (b.top - r.top) - (b.height - u.height);
  const line = ul.firstElementChild?.getBoundingClientRect().height || 48;
  if (u.height <= room) return;
  ul.classList.add("fitted");
  ul.style.maxHeight = `${Math.round(Math.max(room, line * 2.5))}px`;
}

/** The line of the pick going in, in view inside a fitted list. */
function lineInView(li) {
  const ul = li.parentElement;
  if (!ul?.classList.contains("fitted")) return;
  const at = li.getBoundingClientRect().top - ul.getBoundingClientRect().top;
  ul.scrollTop += at - (ul.clientHeight - li.offsetHeight) / 2;
}

/** A seat's penalties: this round's (the cards taken) and the game's.
 * The cards taken ride on the line they add to (a line of their own made
 * the boxes taller and pushed 4번 줄 under a phone's dock: trial finding);
 * two unbreakable parts side by side, a narrow seat box puts 누적 on a line
 * of its own (a " · " between them ended the first line at 360 px). */
function penEl(round, taken, total) {
  return h("span.pen", { title: "이번 판 벌점 (가져간 카드 수) / 누적 벌점", dataset: { round, taken, total } },
    h("span.round-pen", {}, `이번 판\u00a0${round}`,
      taken ? h("span.taken", { title: "이번 판에 가져간 카드" }, `\u00a0(${taken}장)`) : null),
    h("span.total-pen", {}, `누적\u00a0${total}`));
}

/** A row taken counts at once (RULES.md 2.4: "the moment a row is
 * taken"): the taker's box says so as the card goes in (it waited for
 * every pick of the turn to be placed, up to 4 s with 10 seats: 줄줄이
 * audit). */
function countTaken(ev) {
  const pen = document.querySelector(`.pr-player[data-seat="${ev.seat}"] .pen`);
  if (!pen || ev.outcome === "append" || typeof ev.total !== "number") return;
  pen.replaceWith(penEl(Number(pen.dataset.round) + (ev.penalty || 0), Number(pen.dataset.taken) + (ev.cards || 0),
    ev.total));
}

function animatePlacement(ctl, ev, names, step) {
  return new Promise((resolve) => {
    const rowEl = document.querySelector(`.pr-row[data-row="${ev.row}"] .row-cards`);
    const info = document.querySelector(`.pr-row[data-row="${ev.row}"] .row-info`);
    if (rowEl) {
      const slots = [];
      const cards = ev.row_cards || [];
      for (let i = 0; i < 5; i++) slots.push(cards[i] !== undefined ? prCard(cards[i], { shown: true }) : h("span.slot", {}, ""));
      mount(rowEl, slots);
      const placed = rowEl.querySelector(`[data-card="${ev.card}"]`);
      if (placed) {
        placed.classList.add("just-placed");
        placed.style.animationDuration = `${Math.min(350, Math.round(step * 0.8))}ms`; // over before the next
      }
      rowEl.parentElement.classList.add(ev.outcome === "append" ? "flash" : "flash-take");
      if (info) info.textContent = `${cards.length}장 · 벌점 ${cards.reduce((s, c) => s + prPenalty(c), 0)}`;
    }
    countTaken(ev);
    const li = document.querySelector(`.reveal li[data-card="${ev.card}"]`);
    if (li) {
      li.classList.add("done");
      li.append(h("span.outcome", {}, ev.outcome === "append" ? "이어 놓음" : `${ev.cards}장 가져감 · 벌점 ${ev.penalty}`));
      lineInView(li);
    }
    setTimeout(() => {
      if (rowEl) rowEl.parentElement.classList.remove("flash", "flash-take");
      resolve();
    }, step);
  });
}
