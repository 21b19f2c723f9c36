// The game screen's controller, common to the three tables: it takes each
// `update` frame (one game burst: its events, then the seat's whole view
// after them; updates.js), hands every new event to the table for its
// announcements and animations, keeps the seat's latest view, tracks the
// deadline from server time, sends actions and shows refusals, and
// remembers the match (names by seat) across a page reload. It sends `sync`
// only when it has no view to show (a reload, a screen opened without one),
// after a reconnect whose `welcome` does not bring the game back, and when
// an update shows a gap.
import { h, mount, button, toast, announce } from "./ui.js";
import { net } from "./net.js";
import * as store from "./store.js";
import * as clock from "./clock.js";
import { spokenCards } from "./cards.js";
import { state, GAMES, seatNames, josa, fewestWin, scoreText } from "./state.js";
import * as onecard from "./onecard.js";
import * as penalty from "./penalty.js";
import * as hakka from "./hakka.js";
import * as alerts from "./alerts.js";
import { ratingChangeEl } from "./records.js";
import { planUpdate } from "./updates.js";
import { botTookOver, isAway, isOut, onAutopilot, playedByBot, standingOrder } from "./seats.js";

// Quick reactions (issue 14; docs/websocket.md 3.2): a fixed set, no free
// text. Shown as short Korean reactions, which the shipped Korean font draws
// on every device (colour emoji are missing from many, e.g. Debian's chromium).
export const EMOTES = { thumbs: "최고!", laugh: "ㅋㅋㅋ", wow: "헉!", cry: "ㅠㅠ", nice: "잘했어요" };
const EMOTE_MS = 2500;
// a second press of the same action within this long is a double tap (act)
const DOUBLE_TAP_MS = 1000;
// a move pressed with the connection lost (act): kept and sent once it is back
const HELD_OFFLINE = "연결이 끊겨 있어요. 다시 연결되면 보내요.";
// actions not tied to a turn: sent without the view's turn_key (act)
const ANY_TURN = new Set(["one_card", "resume"]);

// a connection found lost with a move on its way (net.js: checked when a
// move goes unanswered): the move is kept, and sent once it is back. Said
// once a lost connection (it came again at every try to reconnect, over
// the top bar's buttons for most of a minute: trial finding); a press
// while it is lost is answered each time (act).
let heldSaid = false;
function sayHeld() {
  if (!heldSaid) toast(HELD_OFFLINE);
  heldSaid = true;
}
net.on("net", ({ state }) => {
  if (state === "open") heldSaid = false;
  else if (state === "closed" && net.held()) sayHeld();
});

// a refusal shows over the table above the dock, on a phone over the turn
// line and its seconds: the next card picked ends it (it covered the time
// left for its 5 s: trial finding)
document.addEventListener("click", (e) => {
  if (e.target instanceof Element && e.target.closest("section.table .hand .card")) game.clearRefusal();
}, true);

const TABLES = { onecard, penalty_rows: penalty, hakka };
// After `matched` the gateway sends the new game's `view` at once: a screen
// opened before it came asks for it only if it is this late.
const VIEW_DUE_MS = 2500;

export class GameController {
  constructor() {
    this.watchers = 0; // 관전: how many watch this table (`spectators` frames)
    this.inFlight = new Set(); // game:type:turn_key of moves sent, not answered yet (act)
    this.playedKey = null; // game:turn_key of the last move played (act)
    this.id = null;
    this.info = null; // the `matched` frame: game, seat, players, options
    this.view = null;
    this.gameSeq = 0;
    this.t0 = null; // server ms when the game's t was 0
    this.root = null;
    this.table = null;
    this.syncTimer = null;
    this.viewDue = false; // `matched` came: its `view` follows without asking
    this.holdRender = 0; // > 0 while an animation plays
    this.unsubs = [];
    this.final = null; // a `game_result` frame: the game left its shard
    this.rematch = null; // the table's 한 판 더 offer (`rematch` frame body)
    this.emotes = {}; // seat -> {emote, until}
  }

  matched(f) {
    this.info = { game: f.game, seat: f.seat, players: f.players || [], options: f.options || {}, kind: f.kind };
    // a new table: the game before may still show its results (한 판 더);
    // the others' keys go (store.keepGames)
    if (this.id !== f.game_id) store.keepGames([f.game_id, this.id]);
    store.set(`match.${f.game_id}`, this.info);
    if (this.id !== f.game_id) this.reset(f.game_id);
    this.viewDue = !this.view;
    this.table = TABLES[f.game] || null;
    this.listen(); // the view that follows must find us even before the screen opens
    // the game was created just before `matched`: a first guess of when its
    // t = 0 was, until an event's deadline pins it
    if (this.t0 === null && typeof f.server_ms === "number") this.t0 = f.server_ms;
  }

  /** A `welcome` that names the live game brings its `matched` fields
   * (players by seat) when the gateway has them: kept if this tab has none
   * (a new tab or device, whose sessionStorage never saw `matched`). */
  known(f) {
    if (!f.game_id || !Array.isArray(f.players) || !f.players.length) return;
    const stored = store.get(`match.${f.game_id}`, null);
    if (stored?.players?.length) return;
    const info = { game: f.game, seat: f.seat, players: f.players, options: f.options || {}, kind: f.kind };
    store.set(`match.${f.game_id}`, info);
    if (this.id === f.game_id) {
      this.info = info;
      this.table = this.table || TABLES[f.game] || null;
      this.render();
    }
  }

  reset(id) {
    this.id = id;
    this.view = null;
    this.gameSeq = 0;
    this.t0 = store.get(`t0.${id}`, null);
    this.tableState = {};
    this.final = store.get(`final.${id}`, null);
    this.rematch = null;
    this.rematchAsking = false;
    this.emotes = {};
    this.watchers = 0;
  }

  /** The spectator count (docs/websocket.md 3.5), shown in the table's header. */
  onWatchers(f) {
    if (f.game_id !== this.id) return;
    this.watchers = f.count || 0;
    this.showWatchers();
  }

  showWatchers() {
    const el = this.root?.querySelector(".watchers");
    if (!el) return;
    el.hidden = !this.watchers;
    el.dataset.count = String(this.watchers);
    el.textContent = `관전 ${this.watchers}명`;
  }

  /** The game asked for is not this player's (a `sync` refused with
   * `not_in_game`: someone else's game, or one left): say so, with the way
   * out, instead of "불러오는 중" for good. */
  unavailable(f) {
    if (!this.root || this.view || this.final || !location.hash.startsWith(`#/game/${this.id}`)) return;
    clearTimeout(this.syncTimer);
    mount(this.root, h("section.page.unavailable", { role: "alert", dataset: { code: f.code || "" } },
      h("h1", {}, "이 게임을 열 수 없어요"),
      h("p", {}, f.message || "참여 중인 게임이 아니에요."),
      h("p.muted", {}, "진행 중인 게임이라면 관전할 수 있어요."),
      h("div.row.actions", {},
        button("로비로", () => this.done(), { class: "primary", dataset: { act: "lobby" } }),
        button("관전하기", () => { location.hash = `#/watch/${this.id}`; }, { dataset: { act: "watch" } }))));
  }

  /** How the game ended, from the game directory (docs/websocket.md 4). */
  onFinal(f) {
    store.set(`final.${f.game_id}`, f);
    // a tab that never saw `matched` learns who sat where from the result
    if (f.players?.length && !store.get(`match.${f.game_id}`, null)?.players?.length) {
      store.set(`match.${f.game_id}`, { game: f.game, seat: f.seat, players: f.players, options: {} });
    }
    if (this.id === f.game_id) {
      clearTimeout(this.syncTimer); // nobody serves the game any more
      this.final = f;
      if (!this.info?.players?.length) this.info = store.get(`match.${f.game_id}`, null) || { game: f.game, seat: f.seat, players: [], options: {} };
      this.render();
      this.notePlaying();
    }
  }

  onRematch(f) {
    if (f.game_id !== this.id) return;
    const started = f.rematch?.state === "started" && this.rematch?.state !== "started";
    this.rematch = f.rematch;
    // said as the new table opens: who does not come along (it started
    // with a bot in a friend's seat, unsaid: rooms audit)
    if (started && (f.rematch.agreed || []).includes(this.seat()) && leftOut(this, f.rematch).length) {
      toast(leftOutText(this, f.rematch), "info", 6000);
    }
    if (rematchOver(this)) {
      this.render(); // its 한 판 더 button goes (pressed, it did nothing: trial finding)
      return;
    }
    const box = document.getElementById("rematch");
    if (box) mount(box, rematchStatus(this));
    markRematch(this);
    clock.refreshTimers();
  }

  /** The table's 한 판 더 offer as it is, asked once per results screen
   * (without answering it): a reloaded one showed none until the offer
   * changed, and one opened after it started still offered 한 판 더 (trial
   * findings). A tab that said yes asks with `rematch` itself (open). */
  askRematchState() {
    if (this.rematchAsked === this.id || this.spectator || this.replay) return;
    if (store.get(`rematch.${this.id}`, false)) return;
    if (net.send({ type: "rematch_state", game_id: this.id })) this.rematchAsked = this.id;
  }

  async askRematch() {
    if (rematchPressed(this)) return; // pressed already: the offer waits for the others
    store.set(`rematch.${this.id}`, true);
    store.del(`left.${this.id}`); // back in for this table: leaving it declines again
    const id = this.id;
    this.rematchAsking = true;
    markRematch(this);
    await net.ask({ type: "rematch", game_id: id }, ["rematch", "matched"], toast);
    if (this.id !== id) return;
    this.rematchAsking = false; // answered: the offer says whether I am in it (refused: not)
    markRematch(this);
  }

  onEmote(f) {
    if (f.game_id !== this.id || mutedSeat(this, f.seat)) return;
    this.emotes[f.seat] = { emote: f.emote, until: Date.now() + EMOTE_MS };
    showEmotes(this);
    setTimeout(() => showEmotes(this), EMOTE_MS + 30);
  }

  names() { return seatNames(this.info?.players || []); }

  /** The game's frames, from `matched` (or the screen's opening) until done(). */
  listen() {
    if (this.unsubs.length) return;
    this.unsubs.push(net.on("update", (f) => this.onUpdate(f)));
    this.unsubs.push(net.on("view", (f) => this.onView(f)));
    this.unsubs.push(net.on("spectators", (f) => this.onWatchers(f)));
    // a move from before a reload, played once sent again: its turn's (act)
    this.unsubs.push(net.on("restored", (f) => {
      const key = f.sent?.action?.turn_key;
      if (f.type === "result" && Number.isInteger(key)) this.playedKey = `${f.sent.game_id}:${key}`;
    }));
    // reconnected: the gateway follows a welcome that names this game with
    // what was missed (a resumed session) or the whole view (a new one;
    // docs/websocket.md 4), so there is nothing to ask for then; a welcome
    // without it (the game ended meanwhile, or another took its place) asks
    this.unsubs.push(net.on("welcome", (f) => {
      if (this.id && !this.final && f.game_id !== this.id) this.requestSync(0);
    }));
  }

  open(root, id) {
    const other = this.id !== id; // the info held is another game's (e.g. the live one's)
    if (other) this.reset(id);
    this.info = !other && this.info?.game ? this.info : store.get(`match.${id}`, null);
    this.root = root;
    const game = this.info?.game;
    this.table = TABLES[game] || null;
    // back to a table this tab stopped listening to (left by 나가기, then
    // reopened by its address): the view it kept is old, the game went on
    const missed = !!this.view && !this.unsubs.length && !this.final;
    this.listen();
    if (!this.view && this.final) this.render();
    else if (!this.view) mount(root, h("p.loading", {}, "게임을 불러오는 중…"));
    else this.render();
    if (!this.final && !this.view) this.requestSync(this.viewDue ? VIEW_DUE_MS : 0);
    else if (missed) this.requestSync(0);
    // back after a reload with 한 판 더 asked: ask again to get the offer's state
    if (store.get(`rematch.${id}`, false)) net.send({ type: "rematch", game_id: id });
  }

  close() {
    this.unsubs.forEach((u) => u());
    this.unsubs = [];
  }

  requestSync(delay = 0) {
    clearTimeout(this.syncTimer);
    this.syncTimer = setTimeout(() => net.send({ type: "sync", game_id: this.id }), delay);
  }

  /** An `update` frame: its new events to the table, in order, then its
   * view (updates.js says which parts are new). */
  onUpdate(f) {
    if (f.game_id !== this.id) return;
    const plan = planUpdate(this.gameSeq, f, !!this.view);
    if (!plan.events.length && !plan.takeView) return; // replayed: we have all of it
    const events = f.events || [];
    const last = events[events.length - 1];
    this.learnClock({ deadline: f.deadline, replayed: f.replayed, t: last?.t, server_ms: f.server_ms });
    for (const e of plan.events) {
      if (typeof e.game_seq === "number") this.gameSeq = Math.max(this.gameSeq, e.game_seq);
      if (this.table?.onEvent) {
        this.table.onEvent(this, e.event, { ...e, game_id: f.game_id, deadline: f.deadline, replayed: f.replayed });
      }
    }
    this.gameSeq = plan.seq;
    if (plan.takeView) this.takeView(f.view ? f : { ...f, view: { ...this.view, ...f.patch } });
    if (plan.gap) this.requestSync(0); // events were lost: the whole view again
  }

  /** Game time t -> server time. An event's deadline carries both its game
   * time (t) and server time, which fixes when the game's t = 0 was. */
  learnClock(f) {
    const d = f.deadline;
    let t0 = null;
    if (d && typeof d.t === "number" && typeof d.server_ms === "number") t0 = d.server_ms - d.t;
    else if (this.t0 === null && !f.replayed && typeof f.t === "number" && typeof f.server_ms === "number") t0 = f.server_ms - f.t;
    if (t0 !== null && t0 !== this.t0) {
      this.t0 = t0;
      store.set(`t0.${this.id}`, t0);
    }
  }

  /** Server ms at which game time `t` falls (null when not known yet). */
  at(t) {
    if (typeof t !== "number" || this.t0 === null) return null;
    return this.t0 + t;
  }

  /** A `view` frame (after `matched`, answering `sync`, a resync). */
  onView(f) {
    if (f.game_id && this.id && f.game_id !== this.id) return;
    if (!this.id) this.reset(f.game_id);
    // an answer to a sync that updates overtook: the view held is newer
    if (this.view && typeof f.game_seq === "number" && f.game_seq < this.gameSeq) return;
    this.takeView(f);
  }

  takeView(f) {
    if (this.viewDue) {
      this.viewDue = false;
      clearTimeout(this.syncTimer); // the view came without asking
    }
    this.view = f.view;
    if (f.deadline) this.learnClock({ deadline: f.deadline, replayed: true });
    if (typeof f.game_seq === "number") this.gameSeq = Math.max(this.gameSeq, f.game_seq);
    if (this.t0 === null && typeof f.view?.t === "number" && typeof f.server_ms === "number") {
      this.t0 = f.server_ms - f.view.t; // rough: the view's t is its last input
    }
    if (!this.info || !this.info.game) {
      this.info = { game: f.view?.game, seat: f.view?.seat, players: [], options: {} };
    }
    if (!this.table) this.table = TABLES[this.info.game] || null;
    if (this.info.seat === undefined && typeof f.view?.seat === "number") this.info.seat = f.view.seat;
    // a whole view instead of the events (a resume that could not replay,
    // a new tab, a table reopened): the table may say what it did not see
    if (f.resync && this.table?.onWholeView) this.table.onWholeView(this, f);
    if (!this.holdRender) this.render();
    this.notePlaying();
  }

  /** The server says this game is not the player's now (a `sync` refused
   * `not_in_game`): neither the lobby nor a reload offers it back. */
  notMine() {
    if (this.id) store.set(`left.${this.id}`, true);
    this.notePlaying();
  }

  /** The lobby offers a game under way back, and no other meanwhile: told
   * when that changes while it is on screen (the game ended, or a bot took
   * the seat, in the background). */
  notePlaying() {
    const now = this.playsNow();
    if (now !== this.playingSaid) {
      this.playingSaid = now;
      state.emit("playing");
    }
  }

  /** Tables call this while they animate; render() runs when the last one ends. */
  hold() { this.holdRender += 1; }
  release() {
    this.holdRender = Math.max(0, this.holdRender - 1);
    if (!this.holdRender) this.render();
  }

  render() {
    if (this.holdRender) return; // an animation owns the screen; release() renders
    if (pointer.down) { // never replace what a finger is pressing: the click would be lost
      pointer.pending = true;
      return;
    }
    if (!this.root || !location.hash.startsWith(`#/game/${this.id}`)) return;
    if (!this.view && this.final) {
      mount(this.root, h("section.table", { dataset: { game: this.info?.game || "" } },
        gameHeader(this), finalPanel(this)));
      return;
    }
    if (!this.view) return;
    if (!this.table) {
      mount(this.root, h("p", {}, "알 수 없는 게임이에요."));
      return;
    }
    this.table.render(this, this.root);
    showPanel(this, this.root);
    const section = this.root.querySelector("section.table");
    if (section && !this.view.finished && this.seat() !== null) section.append(emoteBar(this));
    showEmotes(this);
    this.showWatchers();
    alerts.myTurn(turnIsMine(this));
    clock.refreshTimers();
    sayChanges(this);
  }

  /** Send a game action; a refusal is shown with its Korean message (or
   * `explain(error frame)`'s, when it has one: the table's words for it). */
  async act(action, explain = null) {
    // a double tap: the same action again within a moment. The first made
    // the move and the turn moved on, so the second is "not your turn" (or
    // "turn passed": its turn_key the first's) — shown under "내 차례예요"
    // once the turn came back (trial finding); not said. (No count of answers awaited: one that went unanswered, as an
    // action the rate limit dropped once was, would stay up for good: review.)
    const at = Date.now();
    const prev = this.lastAct;
    this.lastAct = { game: this.id, type: action.type, at };
    const again = prev && prev.game === this.id && prev.type === action.type && at - prev.at < DOUBLE_TAP_MS;
    // off the network it is kept and sent once the connection is back: said
    // (a 1장 뽑기 pressed offline did nothing, then went 10 s later: trial
    // finding) — but not 원카드!, whose 3 s would be over by then: a false
    // call, one card drawn (review finding)
    if (net.state === "closed" || net.state === "connecting") {
      if (action.type === "one_card") {
        toast("연결이 끊겨 있어 원카드!를 보내지 못했어요.", "error");
        return null;
      }
      if (!again) { toast(HELD_OFFLINE); heldSaid = true; } // each press is answered
    }
    // applied only on the turn it was chosen on: a move kept while the
    // connection was down, the turn timed out meanwhile and come round
    // again, is refused (turn_passed), not played on a table never seen
    // (docs/websocket.md 3). The view's now, unless the table names the
    // turn (줄줄이 벌점: a [확정] waits for its pick's answer first).
    const key = this.view?.turn_key;
    if (!ANY_TURN.has(action.type) && !("turn_key" in action) && Number.isInteger(key)) {
      action = { ...action, turn_key: key };
    }
    // the same move of the same turn still on its way is not sent twice (a
    // slow network: pressed again after 1.2 s, it came back "차례가 이미
    // 끝나서 내지 않았어요." for a move that was played; network audit). A
    // pick (줄줄이 벌점's select) may change meanwhile: the last one counts.
    const flight = `${this.id}:${action.type}:${action.turn_key ?? ""}`;
    if (action.type !== "select" && "turn_key" in action && this.inFlight.has(flight)) {
      if (!again) toast("앞서 누른 수를 보내는 중이에요."); // (a double tap: nothing to say)
      return null;
    }
    this.inFlight.add(flight);
    let f;
    try {
      f = await net.action(this.id, action,
        // (it may have arrived before the connection went: the table shows it if so)
        action.type === "one_card" ? "연결이 끊겼던 사이의 원카드!는 다시 보내지 않았어요." : null);
    } finally {
      this.inFlight.delete(flight);
    }
    if (f.type === "error") {
      const late = f.code === "not_your_turn" || f.code === "turn_passed";
      // late after a move of that turn was played: that move stands, not said
      const played = "turn_key" in action && this.playedKey === `${this.id}:${action.turn_key}`;
      if (!((again || played) && late)) this.refused({ ...f, message: explain?.(f) || f.message });
      return null;
    }
    if ("turn_key" in action && action.type !== "select") this.playedKey = `${this.id}:${action.turn_key}`;
    this.clearRefusal(); // an earlier refusal no longer stands (its update already drew the table)
    return f;
  }

  clearRefusal() {
    this.refusal = null;
    clearTimeout(this.refusalTimer);
    const box = document.getElementById("refusal");
    if (box) box.hidden = true;
  }

  refused(f) {
    this.refusals = (this.refusals || 0) + 1;
    // kept across re-renders for a few seconds (bots keep the table moving)
    this.refusal = { code: f.code, message: f.message || f.code, until: Date.now() + 5000 };
    const box = document.getElementById("refusal");
    if (box) {
      box.textContent = this.refusal.message;
      box.dataset.code = f.code;
      box.hidden = false;
    }
    if (box && !underTopBar(box)) {
      announce(this.refusal.message, true);
    } else {
      // a dock almost the screen's height (a phone on its side, a long
      // hand) puts the line above it under the top bar: a toast says it
      // (review finding)
      if (box) box.hidden = true;
      this.refusal.toasted = true;
      toast(this.refusal.message, "error");
    }
    clearTimeout(this.refusalTimer);
    this.refusalTimer = setTimeout(() => this.clearRefusal(), 5000);
  }

  leave() {
    if (this.view && !this.view.finished && this.mySeatIsHuman()) {
      // what leaving costs, said before (trial: −57 to −142 with no word why);
      // out of the game already (원카드's 탈락), going costs nothing: the
      // place stays (rules revision 3, `kept`; the question said 꼴찌)
      if (!isOut(this.view, this.seat()) && !confirm(LEAVE_QUESTION)) return;
      net.action(this.id, { type: "leave" });
    }
    this.done();
  }

  /** Back to the lobby for good: a reload no longer brings this game back. */
  done() {
    this.doneWith();
    location.hash = "#/";
  }

  /** Done with this game, wherever the player goes: a game that is over
   * declines its 한 판 더, and neither a reload nor another device brings
   * it back (the gateway's welcome no longer names it). */
  doneWith() {
    if (this.isOver() && !this.hasLeft()) {
      net.send({ type: "rematch_decline", game_id: this.id });
    }
    store.del(`match.${this.id}`);
    store.del(`rematch.${this.id}`); // back to its results, 한 판 더 is not asked again unpressed
    store.set(`left.${this.id}`, true);
    this.rematchAsking = false; // declined: a yes on its way is no longer pressed
    this.close();
    alerts.myTurn(false);
    this.notePlaying();
  }

  isOver() { return !!(this.view?.finished || this.final); }

  /** The player is done with this game (left it, went 로비로, or it is not theirs). */
  hasLeft() { return !!store.get(`left.${this.id}`, false); }

  /** This tab plays its game now: a seat of its own, not left, not over. */
  playsNow() {
    return !!(this.id && this.view && !this.isOver() && !this.hasLeft() && this.mySeatIsHuman());
  }

  /** Its game ended while the player was elsewhere (the lobby): its result not seen yet. */
  endedUnseen() {
    return !!(this.id && this.isOver() && !this.hasLeft() && this.mySeatIsHuman());
  }

  /** The player plays the seat (no bot took it over: left, or away too long). */
  mySeatIsHuman() {
    const s = this.seat();
    return s !== null && s !== undefined && !playedByBot(this.view, s);
  }

  seat() {
    if (typeof this.view?.seat === "number") return this.view.seat;
    return this.info?.seat ?? null;
  }
}

export const game = new GameController();

// A view can arrive between pointerdown and pointerup (bots keep playing);
// re-rendering then would swallow the player's click. Renders wait for the
// click to be dispatched.
const pointer = { down: false, pending: false, guard: null };
function pointerReleased() {
  clearTimeout(pointer.guard);
  pointer.down = false;
  if (pointer.pending) {
    pointer.pending = false;
    game.render();
  }
}
document.addEventListener("pointerdown", () => {
  pointer.down = true;
  clearTimeout(pointer.guard); // a press held (or released off the page) never freezes the table
  pointer.guard = setTimeout(pointerReleased, 1500);
}, true);
for (const type of ["pointerup", "pointercancel"]) {
  document.addEventListener(type, () => setTimeout(pointerReleased, 0), true); // after its click
}
window.addEventListener("blur", () => setTimeout(pointerReleased, 0));

export function showGame(root, id) {
  game.open(root, id);
}

/** Shared pieces of the three tables. */
export function timerEl(ctl, gameT, totalMs = null, mine = false) {
  const at = ctl.at(gameT);
  if (at === null || ctl.view?.paused) return h("span.timer.none");
  // not read out: it changes every second (the turn's start is said
  // instead); my own move's, at 10 and 5 seconds left (clock.js warn)
  const warn = mine && !ctl.replay && !ctl.spectator ? { warn: "1" } : {};
  return h("span.timer", { dataset: { deadline: String(at), ...(totalMs ? { total: String(totalMs) } : {}), ...warn },
    title: "남은 시간", "aria-hidden": "true" }, h("span.secs", {}, ""), "초");
}

/** A phone dock's "남은 시간 N초" (줄줄이 벌점's pick, 하카 카드's turn). */
export function dockTimer(ctl, gameT, totalMs = null, mine = false) {
  return h("div.dock-timer", {}, "남은 시간 ", timerEl(ctl, gameT, totalMs, mine));
}

export function gameHeader(ctl, extra = []) {
  const meta = GAMES[ctl.info?.game] || { name: "" };
  const sound = alerts.soundOn();
  // 관전 and 다시 보기 have no turns to be told of; a spectator leaves by the
  // watch bar's 로비로, a replay goes back to 내 기록
  const watching = ctl.spectator || ctl.replay;
  return h("div.game-head", {},
    h("h1", {}, meta.name),
    extra,
    // every player away (RULES.md 4): the clocks stand still, for all
    // three games (and whoever watches: 관전 followed 멈춤 from the lobby)
    ctl.view?.paused && !ctl.view.finished
      ? h("span.badge.away.paused", { dataset: { say: "paused" } }, "모두 연결이 끊겨 멈춤") : null,
    h("span.watchers.badge", { title: "이 게임을 보고 있는 사람", hidden: !ctl.watchers,
      dataset: { count: String(ctl.watchers || 0) } }, `관전 ${ctl.watchers || 0}명`),
    // the controls stay together at the right: on a narrow screen they
    // wrap as one line, not 나가기 alone
    h("span.head-controls", {},
      watching ? null : button(sound ? "소리 켬" : "소리 끔", () => { alerts.setSound(!alerts.soundOn()); ctl.render(); },
        // its name is what it shows, its state pressed = on (it read "끄기", pressed = off: a11y trial)
        { class: "small sound", "aria-pressed": String(sound), title: "내 차례 알림 소리: 눌러서 켜거나 꺼요", dataset: { act: "sound" } }),
      // in this tab (a new one connected and took the game from this one,
      // and showed the table, not the rules: tabs audit); the rules lead back
      h("a.rules-link", { href: `#/rules/${ctl.info?.game}` }, "규칙"),
      // (a replay's end has its own 내 기록으로 under the result: one, not two alike)
      ctl.spectator || (ctl.replay && ctl.view?.finished) ? null
        : button(ctl.replay ? "내 기록으로" : "나가기", () => ctl.leave(), { class: "small", dataset: { act: "leave" } })));
}

/** What a screen reader is told after a redraw: the lines of the table
 * marked ``data-say`` (whose turn, the newest log line, the preview of a
 * pick, a banner) whose words changed since the last one, once. The
 * screens are not live regions: every update redraws them (a11y trial:
 * the whole table was read out several times per move). Inside a line,
 * what is ``aria-hidden`` is not said; a line that is itself
 * ``aria-hidden`` is a line written only to be said (Hakka's newest play,
 * which its table shows as cards) and is said whole. */
const SAY_ORDER = ["log", "banner", "attack", "status", "effect"];

export function sayChanges(ctl, quiet = false) { // quiet: only note what is shown now
  const now = {};
  for (const el of ctl.root.querySelectorAll("[data-say]")) {
    if (el.hidden) continue;
    const c = el.cloneNode(true);
    for (const x of c.querySelectorAll('[aria-hidden="true"]')) x.remove();
    // a heading's or a list item's end is a pause (줄줄이 벌점's reveal was
    // said "…공개벌점키보드2: 20 → 2번 줄에 이어 놓음 시간 초과봇3…": a11y audit)
    for (const x of c.querySelectorAll("h2, h3, h4, li, p")) {
      if (!/[.!?…:]\s*$/.test(x.textContent)) x.append(".");
      x.append(" ");
    }
    const t = spokenCards(c.textContent.replace(/\s+/g, " ").trim());
    if (t) now[el.dataset.say] = now[el.dataset.say] ? `${now[el.dataset.say]} ${t}` : t;
  }
  const said = ctl.said || {};
  // what happened first, then what it means for me
  const order = (k) => { const i = SAY_ORDER.indexOf(k); return i < 0 ? SAY_ORDER.length : i; };
  const changed = Object.entries(now).filter(([k, t]) => said[k] !== t)
    .sort(([a], [b]) => order(a) - order(b)).map(([, t]) => t);
  ctl.said = now;
  if (changed.length && !quiet) announce(changed.join(" "));
}

/** Whether `el`'s top is under the sticky top bar. */
function underTopBar(el) {
  const bar = document.querySelector(".topbar");
  return !!bar && el.getBoundingClientRect().top < bar.getBoundingClientRect().bottom - 1;
}

export function refusalBox() {
  const r = game.refusal && game.refusal.until > Date.now() && !game.refusal.toasted ? game.refusal : null;
  // said once by refused(), not at each redraw of its 5 s (a11y trial)
  return h("p#refusal.refusal", { hidden: !r, dataset: r ? { code: r.code } : {} },
    r ? r.message : "");
}

/** 자동 진행 and its [직접 하기], on a live table only (a replay and a
 * finished game showed them: replay audit); the seat's 자동 badge stays.
 * `resuming`: 직접 하기 pressed, taking effect at my next turn (원카드). */
export function autopilotBar(ctl, on, resuming = false) {
  if (!on || ctl.replay || ctl.view?.finished || takenOverBar(ctl)) return null;
  return h("div.banner.autopilot", { dataset: { say: "banner" } },
    resuming ? "다음 내 차례부터 직접 해요." : "시간이 세 번 지나 자동 진행 중이에요.",
    resuming ? null : button("직접 하기", () => ctl.act({ type: "resume" }), { class: "primary", dataset: { act: "resume" } }));
}

/** A result panel that has just appeared (the game's, a hand's, a
 * round's) is brought into view at its top: on a phone scrolled down to
 * the hand, "게임 결과" and the hakka scoring opened under the top bar
 * (trial finding). Once per panel, so reading it is never interrupted. */
export function showPanel(ctl, root) {
  const panel = root.querySelector("section.results, section.hand-result, section.round-summary");
  const v = ctl.view || {};
  // the game's id too: another game's panel is a new one (a watched game
  // over, then another that is over too)
  const key = panel ? `${ctl.id}:${panel.className}:${v.round ?? ""}:${v.finished ? "end" : ""}` : null;
  if (key === ctl.panelShown) return;
  ctl.panelShown = key;
  const bar = document.querySelector(".topbar")?.getBoundingClientRect().bottom || 0;
  if (panel && panel.getBoundingClientRect().top < bar) panel.scrollIntoView({ block: "start" });
  // the game's end takes the keyboard to its heading (it was 4 Tabs away, unsaid: a11y trial)
  if (panel?.matches("section.results")) panel.querySelector("h2")?.focus({ preventScroll: true });
}

export function resultsPanel(ctl, rows, title = "게임 결과") {
  // not a player whose seat a bot finished, live or from the directory's
  // final result (an older game left, opened by its address, offered it: review)
  const canRematch = ctl.final ? !(ctl.final.info?.substituted || [])[ctl.final.seat] : ctl.mySeatIsHuman();
  // the live table's end says it as the directory's final panel does (a
  // player back to an abandoned game read only "게임이 끝났어요.", and was
  // offered 한 판 더, refused: trial finding)
  const abandoned = (ctl.final?.info?.ended_by || ctl.view?.ended_by) === "abandoned";
  if (canRematch && !abandoned && !ctl.rematch) ctl.askRematchState?.();
  // the result's line is said with the game's end (it said "게임이 끝났어요."
  // and not who won: a11y audit)
  for (const r of rows.flat()) if (r?.classList?.contains("result-title")) r.dataset.say = "result";
  return h("section.results", { role: "region", "aria-label": title },
    h("h2", { tabindex: -1 }, title),
    rows,
    abandoned && !ctl.final ? h("p.muted", { dataset: { endedBy: "abandoned" } }, ABANDONED_NOTE) : null,
    ratingChangeEl(ctl),
    // none for a spectator or a replay: its empty line left a gap above 로비로 (trial nitpick)
    ctl.spectator || ctl.replay ? null : h("div#rematch.rematch", { role: "status" }, rematchStatus(ctl)),
    h("div.row.actions", {},
      button(ctl.replay ? "내 기록으로" : "로비로", () => ctl.done(), { dataset: { act: "lobby" } }),
      canRematch && !abandoned && !rematchOver(ctl)
        ? markRematch(ctl, button("한 판 더", () => ctl.askRematch(), { class: "primary", dataset: { act: "rematch" } }))
        : null));
}

/** I chose 한 판 더 and the table's offer is open (or my press is on its
 * way): its button says so (it looked the same pressed or not: trial
 * finding). An expired or failed offer may be asked again. */
function rematchPressed(ctl) {
  const r = ctl.rematch;
  if (ctl.rematchAsking) return true;
  return !!r && r.state === "open" && (r.agreed || []).includes(ctl.seat());
}

/** The 한 판 더 button (`btn`, else the one on the screen) as pressed or not. */
function markRematch(ctl, btn = document.querySelector('section.results [data-act="rematch"]')) {
  if (!btn) return btn;
  const pressed = rematchPressed(ctl);
  btn.textContent = pressed ? "✓ 한 판 더" : "한 판 더";
  btn.setAttribute("aria-pressed", String(pressed));
  btn.classList.toggle("pressed", pressed);
  return btn;
}

/** The table's 한 판 더 started without this player (they did not agree
 * in time). An expired offer is not over: asking again opens a new one. */
function rematchOver(ctl) {
  const r = ctl.rematch;
  return !!r && r.state === "started" && !(r.agreed || []).includes(ctl.seat());
}

/** The table's people still there (no bot took their seat) who did not
 * agree to the 한 판 더 that started: a bot plays their seat in the new
 * game (docs/websocket.md 3.1). */
function leftOut(ctl, r) {
  const agreed = r.agreed || [];
  const tookOver = (s) => (ctl.view ? botTookOver(ctl.view, s) : !!(ctl.final?.info?.substituted || [])[s]);
  return (ctl.info?.players || []).filter((p) => p.kind === "human" && p.seat !== ctl.seat()
    && !agreed.includes(p.seat) && !tookOver(p.seat)).map((p) => p.seat);
}

function leftOutText(ctl, r) {
  const names = ctl.names();
  return `${leftOut(ctl, r).map((s) => names[s] || `${s + 1}번`).join(", ")} 없이 시작해요. 그 자리는 봇이 맡아요.`;
}

function rematchStatus(ctl) {
  const r = ctl.rematch;
  if (!r) return null;
  const names = ctl.names();
  const me = ctl.seat();
  // my own name marked, as everywhere at the table (rooms audit)
  const who = (seats) => seats.map((s) => `${names[s] || `${s + 1}번`}${s === me ? " (나)" : ""}`).join(", ");
  if (r.state === "started") {
    if (!(r.agreed || []).includes(me)) return h("span", {}, `${josa(who(r.agreed), "이/가")} 한 판 더 시작했어요.`);
    return leftOut(ctl, r).length ? `새 게임을 시작해요… ${leftOutText(ctl, r)}` : "새 게임을 시작해요…";
  }
  // (pressed again, it asks the table anew: the line said nobody wanted it
  // right above the button: trial nitpick)
  if (r.state === "expired") return "한 판 더를 기다리는 시간이 지났어요. 누르면 다시 물어봐요.";
  if (r.state === "failed") return "새 게임을 만들 수 없었어요. 잠시 후 다시 해 주세요.";
  const parts = [];
  if ((r.agreed || []).length) parts.push(`한 판 더: ${who(r.agreed)}`);
  if ((r.declined || []).length) parts.push(`로비로 감: ${who(r.declined)}`);
  if ((r.waiting || []).length) parts.push(`기다리는 중: ${who(r.waiting)}`);
  return h("span", { dataset: { state: r.state } }, parts.join(" · "),
    r.until_ms ? [" ", h("span.timer", { dataset: { deadline: String(r.until_ms) } }, h("span.secs"), "초")] : null);
}

const LEAVE_QUESTION = "게임을 나가면 봇이 내 자리를 이어받고, 레이팅은 내가 꼴찌인 것으로 계산해요. 나갈까요?";
const ABANDONED_NOTE = "모두 10분 넘게 연결이 끊겨 승자 없이 끝났고, 레이팅은 바뀌지 않아요.";

/** A live result's title when nobody won: an abandoned game says why
 * (줄줄이 벌점's and Hakka's said "게임 결과" under the panel's "게임 결과"). */
export function noWinnerTitle(v) {
  return v.ended_by === "abandoned" ? ENDED_BY.abandoned : "게임이 끝났어요.";
}

/** 줄줄이 벌점's and Hakka's live result title: "우승: 철수", "공동 우승: …"
 * (a winner a bot stood in for marked), or why nobody won. */
export function winnersTitle(v, nameOf) {
  const w = (v.winners || []).map((s) => winnerName(v, s, nameOf(s)));
  return w.length > 1 ? `공동 우승: ${w.join(", ")}` : w.length ? `우승: ${w[0]}` : noWinnerTitle(v);
}

const ENDED_BY = {
  abandoned: "아무도 돌아오지 않아 게임이 끝났어요.",
  time_cap: "시간이 다 되어 승자 없이 끝났어요.",
};

/** 기본 66점's end under a result's title (RULES.md 2.4): who crossed 66,
 * and that it ended the game; null for any other end. */
export function over66Line(endedBy, penalties, nameOf) {
  const over = endedBy === "score_66" && Array.isArray(penalties)
    ? [...penalties.keys()].filter((s) => (penalties[s] ?? 0) >= 66) : [];
  return over.length ? h("p.muted.end-why", {}, `${over.map((s) => `${nameOf(s)} 벌점 ${penalties[s]}`)
    .join(", ")}: 벌점이 66점 이상이 되어 게임이 끝났어요.`) : null;
}

/** Why I am out of a One Card game, under its result's title (RULES.md 1.8). */
export const OUT_LINE = "카드가 20장 이상이 되어 탈락했어요.";

/** The final result from a `game_result` frame (the game left its shard):
 * the title, then every seat's standing — 벌점 (줄줄이 벌점, fewest first)
 * or 점수 (하카 카드, most first), 승리 in One Card — and who a bot stood in
 * for. */
function finalPanel(ctl) {
  const info = ctl.final?.info || {};
  const names = ctl.names();
  const winners = info.winners || [];
  const me = ctl.final?.seat;
  // (a seat taken once out of the game is 탈락 only: no bot played it)
  const subst = (info.substituted || []).map((x, s) => x && !(info.kept || [])[s]);
  const nameOnly = (s) => names[s] || `${s + 1}번`;
  const nameOf = (s) => `${nameOnly(s)}${s === me ? " (나)" : ""}`;
  const game = ctl.final?.game;
  // as the live result says it: One Card "철수가 이겼어요.", the others "우승: 철수"
  // a seat a bot finished is marked, as the live 줄줄이 벌점 and Hakka results do
  const winner = (s) => botMarked(nameOnly(s), subst[s]);
  const theirs = winners.length > 1 ? `공동 우승: ${winners.map(winner).join(", ")}`
    : game !== "onecard" ? `우승: ${winner(winners[0])}`
      : subst[winners[0]] ? `${nameOnly(winners[0])} 자리의 봇이 이겼어요.` : `${josa(nameOnly(winners[0]), "이/가")} 이겼어요.`;
  const title = ENDED_BY[info.ended_by]
    || (winners.includes(me) && subst[me] ? "내 자리를 이어받은 봇이 이겼어요."
      : winners.includes(me) ? "이겼어요!"
        : winners.length ? theirs : "게임이 끝났어요.");
  const rows = [h("p.result-title", { dataset: { endedBy: info.ended_by || "" } }, title)];
  if (info.ended_by === "abandoned") rows.push(h("p.muted", {}, ABANDONED_NOTE));
  const scores = Array.isArray(info.scores) ? info.scores : null;
  const counts = Array.isArray(info.hand_counts) ? info.hand_counts : null; // One Card, in seat order as live
  const out = info.eliminated || [];
  // why the game ended, or I am out of it, as the live result says it (a
  // player back after the shard let the game go saw only the table: UX audit)
  if (game === "penalty_rows") rows.push(over66Line(info.ended_by, scores, nameOf));
  if (game === "onecard" && out.includes(me)) rows.push(h("p.muted", {}, OUT_LINE));
  const seats = (ctl.info?.players || []).filter((p) => p.kind !== "empty"
    && (!Array.isArray(info.dealt) || info.dealt[p.seat])).map((p) => p.seat);
  if (seats.length) {
    // in the live results' order (One Card's was seat order: the winner could be last)
    const order = scores ? [...seats].sort((a, b) => (fewestWin(game) ? 1 : -1) * ((scores[a] ?? 0) - (scores[b] ?? 0)))
      : standingOrder(info, seats);
    const standing = (s) => {
      if (scores && typeof scores[s] === "number") return scoreText(game, scores[s]);
      if (winners.includes(s)) return "승리";
      if (out.includes(s)) return "탈락";
      return counts && typeof counts[s] === "number" ? `${counts[s]}장 남음` : "";
    };
    rows.push(h("table.scores.final-scores", {}, h("tbody", {}, order.map((s) => h("tr", { class: [winners.includes(s) ? "win" : "", s === me ? "me" : ""].join(" ").trim(), dataset: { seat: s } },
      h("td", {}, nameOf(s), subst[s] ? [" ", tookOverBadge()] : null),
      h("td.num", {}, standing(s)))))));
  }
  if (typeof info.length_ms === "number") {
    rows.push(h("p.muted", {}, `게임 시간 ${duration(info.length_ms)}`));
  }
  return resultsPanel(ctl, rows, "게임 결과");
}

/** Whether the table's `dock` can cover `el`: it is below it, across the
 * screen; beside it (a phone on its side: app.css) it covers nothing, and
 * scrolling "above" it moved a 줄줄이 벌점 row away between the press and
 * the click (a tap on a row chose nothing: the new-user trial). */
export function dockCovers(dock, el) {
  if (!dock || !el) return false;
  const d = dock.getBoundingClientRect();
  const e = el.getBoundingClientRect();
  return d.left < e.right && e.left < d.right;
}

/** Scroll so `el` ends above the table's sticky `dock` (none: nothing to
 * do), not so far that `keep`'s top goes under the top bar (줄줄이 벌점's
 * rows and reveal, 하카 카드's call and lead lines). */
export function aboveDock(el, dock, keep = null) {
  if (!dockCovers(dock, el)) return;
  const below = el.getBoundingClientRect().bottom + 8 - dock.getBoundingClientRect().top;
  const room = keep ? keep.getBoundingClientRect().top - (document.querySelector(".topbar")?.getBoundingClientRect().bottom || 0)
    : Infinity;
  if (below > 0) window.scrollBy(0, Math.min(below, Math.max(0, room)));
}

/** The seat is the player's own: the seat shown, except in a replay seen
 * from another player's seat. */
export function isMine(ctl, s) {
  return s !== null && s !== undefined && s === ctl.seat() && (!ctl.replay || ctl.doc?.my_seat === s);
}

/** " (나)" after a seat's name when the seat is the viewer's own. */
export function meMark(ctl, s) {
  return isMine(ctl, s) ? " (나)" : "";
}

/** Whether the game waits for this player now (the turn alert). */
export function turnIsMine(ctl) {
  const v = ctl.view;
  const me = ctl.seat();
  if (!v || v.finished || v.paused || me === null || me === undefined) return false;
  if (onAutopilot(v, me) || playedByBot(v, me)) return false;
  const game = ctl.info?.game || v.game;
  // 줄줄이 벌점: every seat chooses at once (its `turn` is the turn of the round)
  if (game === "penalty_rows") return v.phase === "select" && !v.confirmed?.[me] && (v.hand || []).length > 0;
  if (game === "hakka") return v.turn === me && (v.phase === "calling" || v.phase === "playing");
  return v.turn === me && !isOut(v, me);
}

/** A results row's mark for a person's seat a bot finished (RULES.md 4:
 * "results mark the seat as bot substituted"; only One Card's said so:
 * trial finding), and a title's name of such a winner. */
export function tookOverMark(v, s) {
  return botTookOver(v, s) ? tookOverBadge() : null;
}

export function winnerName(v, s, name) {
  return botMarked(name, botTookOver(v, s));
}

/** A game's length as 내 기록 and the final result say it: 12분 5초, 45초. */
export function duration(ms) {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}분 ${s % 60}초` : `${s}초`;
}

/** 봇이 대신함: at a table still played (`live`: "이어서 해요") or in a result. */
function tookOverBadge(live = false) {
  return h("span.badge.bot", { title: `나가거나 1분 넘게 돌아오지 않아 봇이 이어서 ${live ? "해요" : "했어요"}` },
    "봇이 대신함");
}

export function botMarked(name, tookOver) {
  return tookOver ? `${name} (봇이 대신함)` : name;
}

/** A seat's presence badges, the same at every table: 자동 (autopilot after
 * three timeouts), 봇이 대신함 (a bot took over a person's seat), 연결 끊김. */
export function seatBadges(ctl, s) {
  const v = ctl.view;
  return [
    onAutopilot(v, s) && !botTookOver(v, s) ? h("span.badge.auto", {}, "자동") : null,
    botTookOver(v, s) ? tookOverBadge(true) : null,
    // not of an abandoned game's end, nor of my own seat once it is over (it
    // said so of a player back at it); a 한 판 더 waits on the others' seats
    isAway(v, s) && !(v.finished && (v.ended_by === "abandoned" || isMine(ctl, s)))
      ? h("span.badge.away", {}, "연결 끊김") : null,
  ];
}

/** My own seat was taken over by a bot: the game goes on without me. */
export function takenOverBar(ctl) {
  const me = ctl.seat();
  if (ctl.spectator || ctl.replay || me === null || me === undefined || !ctl.view || ctl.view.finished || !botTookOver(ctl.view, me)) return null;
  return h("div.banner.taken-over", { dataset: { state: "bot", say: "banner" } },
    "봇이 내 자리를 이어받았어요. 게임이 끝날 때까지 지켜볼 수 있어요.");
}

// -- quick reactions ------------------------------------------------------------
function mutedSeat(ctl, seat) {
  if (seat === ctl.seat()) return false;
  const p = (ctl.info?.players || []).find((x) => x.seat === seat);
  return muted().includes(p?.player || `seat${seat}`);
}

function muted() {
  try { return JSON.parse(localStorage.getItem("ttanjit.muted") || "[]"); } catch { return []; }
}

function toggleMute(key) {
  const m = muted();
  const i = m.indexOf(key);
  if (i >= 0) m.splice(i, 1); else m.push(key);
  try { localStorage.setItem("ttanjit.muted", JSON.stringify(m)); } catch { /* private mode */ }
}

function emoteBar(ctl) {
  const others = (ctl.info?.players || []).filter((p) => p.kind === "human" && p.seat !== ctl.seat());
  const names = ctl.names();
  const send = async (e) => {
    const f = await net.ask({ type: "emote", game_id: ctl.id, emote: e }, ["emote"], toast);
    return f;
  };
  return h("div.emote-bar", { role: "group", "aria-label": "반응 보내기" },
    Object.entries(EMOTES).map(([k, v]) => button(v, () => send(k), { class: "small emote", dataset: { emote: k }, "aria-label": `반응 ${v}` })),
    others.length ? h("details.mute", {}, h("summary", {}, "반응 숨기기"),
      others.map((p) => h("label", {}, h("input", { type: "checkbox", checked: muted().includes(p.player),
        dataset: { seat: p.seat }, onchange: () => { toggleMute(p.player); } }), ` ${names[p.seat]}`))) : null);
}

function seatEl(ctl, seat) {
  const root = ctl.root;
  if (!root) return null;
  return root.querySelector(`.opp[data-seat="${seat}"], .pr-player[data-seat="${seat}"], .hk-seat[data-seat="${seat}"]`)
    || (seat === ctl.seat() ? root.querySelector(".my-row") : null);
}

export function showEmotes(ctl) {
  if (!ctl.root) return;
  for (const b of ctl.root.querySelectorAll(".emote-bubble")) b.remove();
  const now = Date.now();
  for (const [seat, e] of Object.entries(ctl.emotes)) {
    if (e.until <= now) { delete ctl.emotes[seat]; continue; }
    const el = seatEl(ctl, Number(seat));
    if (el) el.append(h("span.emote-bubble", { dataset: { emote: e.emote }, role: "status" }, EMOTES[e.emote] || ""));
  }
}
