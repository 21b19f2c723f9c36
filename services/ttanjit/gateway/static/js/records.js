// Who I am and what I played (issue 15): the account box (nickname,
// 다른 기기에서 계속하기, sign-out), display ratings and the change after a
// game, leaderboards, 내 기록 (history) and the replay viewer. Replays are
// views computed by the server from the game's record through its engine
// (docs/websocket.md 1.2); this file only draws them with the live tables.
import { h, mount, button, toast, oneAtATime } from "./ui.js";
import { net } from "./net.js";
import { serverNow } from "./clock.js";
import * as store from "./store.js";
import { state, GAMES, seatNames, placeText, josa, signed, boardLine, hangulTyped, HANGUL_CODE, NICK_MAX, NICK_TOO_LONG,
  nicknameTooLong } from "./state.js";
import * as identity from "./identity.js";
import * as onecard from "./onecard.js";
import * as penalty from "./penalty.js";
import * as hakka from "./hakka.js";
import { game, sayChanges, botMarked, duration } from "./game.js";

const TABLES = { onecard, penalty_rows: penalty, hakka };
const OUTCOME = { win: "승", loss: "패", left: "나감", none: "무효" };

/** "1,532" (or "1,500 (잠정)") with the explanation on hover/tap. */
const PROVISIONAL_GAMES = 10; // a rating of fewer games is 잠정 (matchmaker/standings.py)
const provisional = (r) => r.provisional ?? (r.games ?? 0) < PROVISIONAL_GAMES;

export function ratingLabel(r) {
  const d = r.display ?? Math.round(1500 + 40 * Number(r.ordinal ?? 0));
  const prov = provisional(r);
  return h("span.rating", { title: prov ? `10게임을 채울 때까지는 잠정 레이팅이에요 (${r.games ?? 0}/10게임).` : "처음 1,500에서 시작하는 레이팅이에요.",
    dataset: { display: String(d) } }, d.toLocaleString("ko-KR"), prov ? h("small.prov", {}, " (잠정)") : null);
}

// -- the rating change on the result screen ------------------------------------------
net.on("ratings", (f) => { if (f.change) showChange(f.change); });

/** Keep a game's rating change for this tab and show it if its result is on screen. */
function showChange(c) {
  store.set(`change.${c.game_id}`, c);
  const box = document.getElementById("rating-change");
  if (box && box.dataset.gameId === c.game_id) mount(box, changeBody(c));
}

function changeBody(c) {
  // the why in plain sight (behind a tap, nobody found it: new-user trial)
  return [
    // ±0 is neither (a loss that moved nothing read green: trial nitpick)
    h("p.delta", { class: c.delta > 0 ? "up" : c.delta < 0 ? "down" : null },
      `${GAMES[c.game]?.name || ""} 레이팅 ${signed(c.delta)}`,
      h("small", {}, ` (${c.before.toLocaleString("ko-KR")} → ${c.after.toLocaleString("ko-KR")}${c.provisional ? ", 잠정" : ""})`)),
    c.why ? h("p.why", {}, c.why) : null,
  ];
}

/** The result screen's rating line (filled when the `ratings` frame comes). */
export function ratingChangeEl(ctl) {
  if (!ctl?.id || ctl.replay || ctl.spectator) return null; // a spectator has no rating in it
  const c = store.get(`change.${ctl.id}`, null);
  const box = h("div#rating-change.rating-change", { role: "status", dataset: { gameId: ctl.id } },
    c ? changeBody(c) : null);
  if (!c) fromHistory(ctl.id, ctl.info?.game || ctl.final?.game);
  return box;
}

// A tab that missed the game's `ratings` frame (opened after the game, or
// reloaded: the change is kept per tab) finds the change in 내 기록.
const asked = new Set(); // game ids asked for, being asked again, or found
async function fromHistory(gameId, game, tries = 0) {
  if (!GAMES[game] || asked.has(gameId)) return;
  asked.add(gameId);
  const r = await identity.getJson(`api/history/${game}?offset=0&limit=10`);
  const e = r.ok ? (r.body.games || []).find((g) => g.game_id === gameId) : null;
  if (!e) { // not listed yet (the result is on its way): again in 3 s, while it is on screen
    setTimeout(() => {
      asked.delete(gameId);
      if (tries < 10 && document.getElementById("rating-change")?.dataset.gameId === gameId
        && !store.get(`change.${gameId}`, null)) fromHistory(gameId, game, tries + 1);
    }, 3000);
    return;
  }
  if (typeof e.delta !== "number") return; // unrated (abandoned, no winner)
  showChange({ game_id: gameId, game, outcome: e.outcome, before: e.before, after: e.after, delta: e.delta,
    provisional: !!e.provisional, why: e.why || "" });
}

// -- the lobby's account box ----------------------------------------------------------
// The code shown (until its 10 minutes are over) and a nickname being typed
// outlive the box: the lobby draws it anew on a queue, ratings or game
// change, and a code came up once and was gone with the next `ratings`
// (review finding, as the room code being typed: lobby.js typedCode).
let transfer = null; // {code, expires_ms}
let expiry = 0;
let typedNick = null;

function codeLine(out) {
  if (!transfer) return;
  const c = transfer.code;
  mount(out, h("p", {}, "다른 기기의 첫 화면에서 이 코드를 넣어 주세요. 10분 안에 한 번만 쓸 수 있어요: ",
    h("strong.code", { dataset: { code: c } }, `${c.slice(0, 4)}-${c.slice(4)}`)));
}

export function accountBox(rerender) {
  const nick = h("input", { name: "new-nickname", maxlength: 4 * NICK_MAX, value: typedNick ?? store.get("nickname", ""),
    "aria-label": "새 닉네임", oninput: () => { typedNick = nick.value; } });
  const out = h("div.code-out", { role: "status" });
  if (transfer && transfer.expires_ms > serverNow()) codeLine(out);
  const renamed = oneAtATime(identity.rename);
  const rename = async (ev) => {
    ev.preventDefault();
    if (nicknameTooLong(nick.value)) { toast(NICK_TOO_LONG, "error"); return; }
    const r = await renamed(nick.value.trim());
    if (!r) return;
    if (!r.ok) { toast(r.body.message || "닉네임을 확인해 주세요.", "error"); return; }
    typedNick = null;
    nick.value = r.body.nickname; // as the server keeps it (the box is kept across redraws)
    // kept over the screen the reconnect leads to (a room's: it was wiped at
    // once); a room or game under way keeps the name it was joined with (tabs audit)
    const now = state.room || game.playsNow() ? " 지금 방이나 게임에는 다음 판부터 보여요." : "";
    toast(`이제 ${josa(r.body.nickname, "으로/로")} 보여요.${now}`, "info keep", 5000);
    document.getElementById("who").textContent = r.body.nickname;
    net.drop(); // the session resumes with the new token (and nickname)
    rerender();
  };
  const newCode = oneAtATime(identity.transferCode);
  const code = async () => {
    const r = await newCode();
    if (!r) return;
    if (!r.ok) { toast(r.body.message || "코드를 만들 수 없어요.", "error"); return; }
    transfer = { code: r.body.code, expires_ms: r.body.expires_ms };
    codeLine(out);
    out.scrollIntoView({ block: "nearest" }); // on a phone it came below the fold (trial)
    // a code past its 10 minutes is no use: it goes (trial: it stayed shown);
    // one timer, the newest code's
    clearTimeout(expiry);
    expiry = setTimeout(() => {
      transfer = null;
      const shown = document.querySelector(".account .code-out");
      if (shown) mount(shown, h("p", {}, "10분이 지나 이 코드는 더 쓸 수 없어요. 필요하면 새 코드를 만들어 주세요."));
    }, Math.max(0, r.body.expires_ms - serverNow()));
  };
  return h("section.card-box.account", {},
    h("h2", {}, "내 계정"),
    h("form.row", { onsubmit: rename }, nick, h("button", { type: "submit", dataset: { act: "rename" } }, "닉네임 바꾸기")),
    h("div.row", {},
      button("다른 기기에서 계속하기", code, { dataset: { act: "transfer" } }),
      button("로그아웃", async () => {
        // what goes with it, said first (a game under way went on without a
        // word, a bot taking the seat a minute later: tabs audit)
        const also = game.playsNow() ? " 진행 중인 게임은 1분 뒤 봇이 내 자리를 이어받아요."
          : state.room ? " 들어가 있는 방의 자리는 1분 뒤 비워져요." : "";
        if (!confirm(`이 브라우저에서 로그아웃할까요?${also} 다시 들어오려면 다른 기기에서 받은 코드가 필요해요.`)) return;
        net.leaving = true; // (the server closes this tab's socket with 4004 meanwhile)
        const why = await identity.signOut();
        if (why) { // still signed in: nothing was revoked
          net.leaving = false;
          net.connect();
          toast(why, "error");
          return;
        }
        location.hash = "#/";
        location.reload();
      }, { class: "small", dataset: { act: "signout" } })),
    out);
}

/** The sign-in screen's "a code from my other device" form. */
export function claimBox() {
  // room for a pasted "ABCD - EFGH" (cut at 9, a wrong code cost one of the 10 tries: identity audit)
  const input = h("input", { name: "transfer-code", maxlength: 20, placeholder: "ABCD-EFGH", autocapitalize: "characters",
    autocomplete: "off", autocorrect: "off", spellcheck: "false", "aria-label": "다른 기기에서 받은 코드" });
  const msg = h("p.form-error", { role: "alert" });
  // said where it is seen: with the keyboard up the line under the form was
  // below the screen's edge, and nothing seemed to happen (IME/touch audit)
  const say = (text) => { msg.textContent = text; msg.scrollIntoView({ block: "nearest" }); };
  const claim = oneAtATime(identity.claimCode);
  const submit = async (ev) => {
    ev.preventDefault();
    // (not sent: the server's malformed_code costs no try, but says less)
    if (hangulTyped(input.value)) { say(HANGUL_CODE); input.focus(); return; }
    const r = await claim(input.value);
    if (!r) return;
    if (!r.ok) { say(r.body.message || "코드를 확인해 주세요."); return; }
    store.forgetTab(); // the player before's session, queue and unanswered moves (review finding)
    store.set("last_seq", 0);
    location.hash = "#/";
    location.reload();
  };
  return h("details.card-box.claim", {},
    h("summary", {}, "다른 기기에서 하던 계정으로 계속하기"),
    h("form.row", { onsubmit: submit }, input, h("button", { type: "submit" }, "계속하기")), msg);
}

// -- leaderboards ---------------------------------------------------------------------
function tabs(kind, game) {
  return h("nav.tabs", {}, Object.entries(GAMES).map(([g, m]) =>
    h("a", { href: `#/${kind}/${g}`, class: g === game ? "active" : "", "aria-current": g === game ? "page" : null }, m.name)));
}

/** An address without a known game (#/history, a typo) shows 원카드's page
 * and says so in the address (the page waited for its own address and
 * stayed "불러오는 중…": trial finding). */
function knownGame(kind, game) {
  if (GAMES[game]) return game;
  history.replaceState(null, "", `#/${kind}/onecard`);
  return "onecard";
}

export async function showBoard(root, game) {
  game = knownGame("board", game);
  mount(root, h("section.page.board", {}, h("h1", {}, "순위"), tabs("board", game), h("p.loading", {}, "불러오는 중…")));
  const r = await identity.getJson(`api/leaderboard/${game}`);
  if (!location.hash.startsWith(`#/board/${game}`)) return;
  if (!r.ok) { mount(root, h("p.form-error", {}, r.body.message || "순위를 불러올 수 없어요.")); return; }
  const b = r.body;
  const me = store.get("player", "");
  const rows = b.entries.map((e) => h("tr", { class: e.player === me ? "me" : "" },
    // (잠정) under 10 games, as everywhere else a rating shows (a 4-game
    // player led the board as plain 1,744: identity audit)
    h("td.num", {}, String(e.rank)), h("td", {}, e.nickname), h("td.num", {}, ratingLabel({ display: e.display, games: e.games })),
    h("td.num", {}, String(e.games))));
  // (잠정) here too, as in the rows (browser check)
  const shown = b.me ? `${b.me.display.toLocaleString("ko-KR")}${
    provisional({ games: b.me.games ?? PROVISIONAL_GAMES }) ? ", 잠정" : ""}` : "";
  const mine = b.me ? (b.me.rank
    ? `내 순위: ${b.me.rank}위 (${shown})`
    : `${b.me.needs}게임 더 하면 순위에 올라요 (지금 ${shown}).`) : "";
  const [who, rank] = boardLine(b, mine);
  mount(root, h("section.page.board", {},
    h("h1", {}, "순위"), tabs("board", game),
    h("p.muted.board-note", {}, who, rank ? [" · ", h("strong.my-rank", {}, rank)] : null),
    rows.length ? h("table.board-table", {},
      h("thead", {}, h("tr", {}, h("th.num", {}, "순위"), h("th", {}, "닉네임"), h("th.num", {}, "레이팅"), h("th.num", {}, "게임 수"))),
      h("tbody", {}, rows)) : h("p.muted", {}, "아직 순위에 오른 사람이 없어요."),
    h("p", {}, h("a", { href: "#/" }, "로비로"))));
}

// -- 내 기록 ----------------------------------------------------------------------------
const gameNames = (g) => seatNames(g.seats.map((s, seat) => ({ ...s, seat })));

export async function showHistory(root, game, page = 0) {
  game = knownGame("history", game);
  const size = 10;
  mount(root, h("section.page.history", {}, h("h1", {}, "내 기록"), tabs("history", game), h("p.loading", {}, "불러오는 중…")));
  const r = await identity.getJson(`api/history/${game}?offset=${page * size}&limit=${size}`);
  if (!location.hash.startsWith(`#/history/${game}`)) return;
  if (!r.ok) { mount(root, h("p.form-error", {}, r.body.message || "기록을 불러올 수 없어요.")); return; }
  const b = r.body;
  const items = b.games.map((g) => { const when = new Date(g.ended_ms).toLocaleString("ko-KR", { dateStyle: "short", timeStyle: "short" }); const names = gameNames(g); return h("li.history-item", { dataset: { gameId: g.game_id, outcome: g.outcome } },
    h("span.when", {}, when),
    h("span.outcome", { class: g.outcome }, OUTCOME[g.outcome] || g.outcome,
      placeText(g) ? h("small.place", {}, ` ${placeText(g)}`) : null),
    // labelled: Hakka's "−6점 −142" read as two scores (trial finding)
    h("span.delta", { title: g.why || "" }, typeof g.delta === "number" ? `레이팅 ${signed(g.delta)}` : "—"),
    h("span.seats", {}, g.seats.map((_, i) => (i === g.seat ? h("strong", {}, names[i]) : names[i]))
      .flatMap((x, i) => (i ? [", ", x] : [x]))),
    // a record is kept 30 days: an older game is listed without its replay
    g.replay === false ? h("span.replay-link.muted", { title: "게임 기록은 30일 동안 보관해요." }, "다시 보기 기간 지남")
      // named with its game (every link of the list read "다시 보기" alike: a11y audit)
      : h("a.replay-link", { href: `#/replay/${g.game_id}`, dataset: { act: "replay" },
        "aria-label": `다시 보기: ${when} ${OUTCOME[g.outcome] || g.outcome}` }, "다시 보기"),
    // who won and how long it took (games of one minute could not be told
    // apart), and why the rating moved so, as the result screen said it
    // (a loss with +26 and nothing more: trial finding)
    h("span.detail", {}, [
      // a winner a bot stood in for is marked, as the results say it (a
      // player whose seat's bot won read "우승: 나": review)
      (g.winners || []).length ? `우승: ${g.winners.map((w) => botMarked(names[w] || `${w + 1}번`,
        !!(g.substituted || [])[w])).join(", ")}` : null,
      // abandoned: why it ended, not the seconds it was played before
      // everyone went ("게임 시간 2초" for a game that sat 10 minutes: identity audit)
      g.ended_by === "abandoned" ? "모두 10분 넘게 연결이 끊겨 끝났어요"
        : typeof g.length_ms === "number" ? `게임 시간 ${duration(g.length_ms)}` : null,
    ].filter(Boolean).join(" · ")),
    g.why ? h("small.why", {}, g.why) : null); });
  const pages = Math.ceil(b.total / size);
  mount(root, h("section.page.history", {},
    h("h1", {}, "내 기록"), tabs("history", game),
    items.length ? h("ol.history-list", {}, items) : h("p.muted", {}, "아직 끝낸 게임이 없어요."),
    pages > 1 ? h("div.row.pager", {},
      button("이전", () => showHistory(root, game, page - 1), { disabled: page === 0 }),
      h("span", {}, `${page + 1} / ${pages}`),
      button("다음", () => showHistory(root, game, page + 1), { disabled: page + 1 >= pages })) : null,
    h("p", {}, h("a", { href: "#/" }, "로비로"))));
}

// -- the replay viewer ------------------------------------------------------------------
class ReplayCtl {
  constructor(doc, back) {
    this.doc = doc;
    this.replay = true;
    this.id = doc.game_id;
    this.i = 0;
    this.tableState = {};
    this.final = null;
    this.rematch = null;
    this.emotes = {};
    this.holdRender = 0;
    this.back = back;
    this.info = { game: doc.game, seat: doc.seat, options: {},
      players: doc.seats.map((s, seat) => ({ seat, kind: s.kind, level: s.level, nickname: doc.nicknames[String(seat)] })) };
  }
  get view() { return this.doc.steps[this.i].view; }
  /** The seat's events from the deal to the step shown (One Card's log). */
  eventsSoFar() { return this.doc.steps.slice(0, this.i + 1).flatMap((s) => s.events || []); }
  /** The events of the step shown (what a live table says by a toast). */
  stepEvents() { return this.doc.steps[this.i].events || []; }
  names() { return seatNames(this.info.players); }
  seat() { return this.doc.seat; }
  at() { return null; } // no clocks in a replay
  mySeatIsHuman() { return false; }
  act() { toast("다시 보기에서는 카드를 낼 수 없어요."); return Promise.resolve(null); }
  hold() {}
  release() {}
  askRematch() {}
  leave() { this.back(); }
  done() { this.back(); }
  render() { if (this.draw) this.draw(); }
}

let leaveReplay = null; // the replay shown: its timer and keys, stopped when another comes
let replayRuns = 0; // the newest showReplay: an older one's answer, come later, draws nothing

/** A finished game's replay from a seat (mine by default), at step ``at``
 * (another seat's view opens at the step shown: the steps are the same
 * inputs from every seat). */
export async function showReplay(root, gid, seat = null, at = 0) {
  leaveReplay?.();
  const run = ++replayRuns;
  // another seat chosen from the keyboard: the picker keeps the focus (an
  // arrow key on it reloaded the replay and lost it: a11y trial)
  const picking = document.activeElement?.getAttribute("name") === "replay-seat";
  mount(root, h("p.loading", {}, "다시 보기를 준비하는 중…"));
  const r = await identity.getJson(`api/replay/${gid}${seat === null ? "" : `?seat=${seat}`}`);
  // (a reload draws it twice, from the page's start and from the welcome:
  // both kept their keys, and each step was read out twice: review)
  if (!location.hash.startsWith(`#/replay/${gid}`) || run !== replayRuns) return;
  if (!r.ok) { mount(root, h("section.page", {}, h("p.form-error", {}, r.body.message || "기록을 불러올 수 없어요."), h("a", { href: "#/" }, "로비로"))); return; }
  const doc = r.body;
  const ctl = new ReplayCtl(doc, () => { stop(); location.hash = `#/history/${doc.game}`; });
  const table = TABLES[doc.game];
  const n = doc.steps.length;
  const tableBox = h("div.replay-table");
  // not a live region (it was read out at each step of a 4× play: a11y
  // trial); said with the step's move when one steps or plays at 1×
  const pos = h("span.replay-pos", { dataset: { say: "step" } });
  let timer = null;
  let speed = 0; // playing at 1× or 4×; 0 stopped
  let shown = false;
  const stop = () => { clearTimeout(timer); timer = null; speed = 0; };
  const go = (i) => { ctl.i = Math.max(0, Math.min(n - 1, i)); ctl.tableState = {}; draw(); };
  const play = (x) => {
    stop();
    if (ctl.i >= n - 1) go(0); // from the start again (at the end it did nothing: replay audit)
    speed = x;
    const tick = () => {
      if (ctl.i >= n - 1) { stop(); draw(); return; }
      const dt = doc.steps[ctl.i + 1].t - doc.steps[ctl.i].t;
      timer = setTimeout(() => { go(ctl.i + 1); if (timer) tick(); }, Math.min(Math.max(dt, 400), 2500) / speed);
    };
    tick();
    draw();
  };
  const markSel = doc.marks.length > 1 ? h("select", { "aria-label": "판으로 이동", name: "replay-mark",
    onchange: (e) => go(Number(e.target.value)) },
  doc.marks.map((m, k) => h("option", { value: m }, `${doc.steps[m].mark ?? k + 1}판`))) : null;
  const seatSel = doc.finished ? h("select", { "aria-label": "누구의 자리에서 볼까요", name: "replay-seat",
    onchange: (e) => { stop(); showReplay(root, gid, Number(e.target.value), ctl.i); } },
  doc.seats.map((_, s) => h("option", { value: s, selected: s === doc.seat }, `${ctl.names()[s]}${s === doc.my_seat ? " (나)" : ""} 자리`))) : null;
  const controls = h("div.replay-bar", { role: "toolbar", "aria-label": "다시 보기" },
    button("처음", () => { stop(); go(0); }, { dataset: { act: "first" } }),
    button("이전", () => { stop(); go(ctl.i - 1); }, { dataset: { act: "prev" } }),
    button("다음", () => { stop(); go(ctl.i + 1); }, { dataset: { act: "next" } }),
    button("끝", () => { stop(); go(n - 1); }, { dataset: { act: "last" } }),
    button("1× 재생", () => play(1), { dataset: { act: "play1" } }),
    button("4× 재생", () => play(4), { dataset: { act: "play4" } }),
    button("멈춤", stop, { dataset: { act: "pause" } }),
    markSel, seatSel, pos);
  function draw() {
    // step 0 is the deal, step k the k-th input of n - 1
    pos.textContent = ctl.i === 0 ? `처음 · 0 / ${n - 1}` : `${ctl.i} / ${n - 1}`;
    pos.dataset.step = String(ctl.i);
    if (markSel) {
      const cur = [...doc.marks].reverse().find((m) => m <= ctl.i) ?? 0;
      markSel.value = String(cur);
    }
    table.render(ctl, tableBox);
    // a step is said as a move is to a player (the newest log line, whose
    // turn), then where it is; not on opening (the screen's title is), nor
    // at 4×, whose steps outrun the words
    sayChanges(ctl, !shown || speed > 1);
    shown = true;
  }
  // ← → step, Home/End go to either end, as a video's keys (only the
  // buttons did: replay audit); not in the 판/seat lists, whose arrows are theirs
  const keys = { ArrowLeft: () => go(ctl.i - 1), ArrowRight: () => go(ctl.i + 1), Home: () => go(0), End: () => go(n - 1) };
  const onKey = (e) => {
    if (!keys[e.key] || e.altKey || e.ctrlKey || e.metaKey || e.target.closest?.("select, input, textarea")) return;
    e.preventDefault();
    stop();
    keys[e.key]();
  };
  ctl.root = root;
  ctl.draw = draw;
  ctl.i = Math.max(0, Math.min(n - 1, at));
  mount(root, h("section.page.replay", { dataset: { game: doc.game, gameId: gid } },
    h("p.replay-note", {}, `다시 보기 · ${GAMES[doc.game]?.name || ""} — 게임 기록대로 한 수씩 다시 보여 줘요.`),
    controls, tableBox));
  draw();
  if (picking) seatSel?.focus({ preventScroll: true });
  const off = () => {
    stop();
    window.removeEventListener("hashchange", off);
    document.removeEventListener("keydown", onKey);
    if (leaveReplay === off) leaveReplay = null;
  };
  leaveReplay = off;
  window.addEventListener("hashchange", off);
  document.addEventListener("keydown", onKey);
}
