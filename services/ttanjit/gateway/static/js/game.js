// The game screen's controller, common to the three tables: it keeps the
// seat's latest view (from `view` frames, asked for with `sync` after each
// burst of events), hands every event to the table for its announcements and
// animations, tracks the deadline from server time, sends actions and shows
// refusals, and remembers the match (names by seat) across a page reload.
import { h, mount, button, toast } from "./ui.js";
import { net } from "./net.js";
import * as store from "./store.js";
import * as clock from "./clock.js";
import { GAMES } from "./state.js";
import * as onecard from "./onecard.js";
import * as penalty from "./penalty.js";
import * as hakka from "./hakka.js";

const TABLES = { onecard, penalty_rows: penalty, hakka };
const SYNC_DELAY_MS = 60;

class GameController {
  constructor() {
    this.id = null;
    this.info = null; // the `matched` frame: game, seat, players, options
    this.view = null;
    this.gameSeq = 0;
    this.t0 = null; // server ms when the game's t was 0
    this.root = null;
    this.table = null;
    this.syncTimer = null;
    this.holdRender = 0; // > 0 while an animation plays
    this.unsubs = [];
  }

  matched(f) {
    this.info = { game: f.game, seat: f.seat, players: f.players || [], options: f.options || {}, kind: f.kind };
    store.set(`match.${f.game_id}`, this.info);
    if (this.id !== f.game_id) this.reset(f.game_id);
    // the game was created just before `matched`: a first guess of when its
    // t = 0 was, until an event's deadline pins it
    if (this.t0 === null && typeof f.server_ms === "number") this.t0 = f.server_ms;
  }

  reset(id) {
    this.id = id;
    this.view = null;
    this.gameSeq = 0;
    this.t0 = store.get(`t0.${id}`, null);
    this.tableState = {};
  }

  names() {
    const out = {};
    for (const p of this.info?.players || []) {
      out[p.seat] = p.kind === "bot"
        ? `봇${p.seat + 1} (${({ easy: "쉬움", normal: "보통", hard: "어려움" })[p.level] || "보통"})`
        : (p.nickname || `${p.seat + 1}번`);
    }
    return out;
  }

  open(root, id) {
    this.unsubs.forEach((u) => u());
    this.unsubs = [];
    if (this.id !== id) this.reset(id);
    this.info = this.info && this.id === id && this.info.game ? this.info : store.get(`match.${id}`, null);
    this.root = root;
    const game = this.info?.game;
    this.table = TABLES[game] || null;
    this.unsubs.push(net.on("event", (f) => this.onEvent(f)));
    this.unsubs.push(net.on("view", (f) => this.onView(f)));
    this.unsubs.push(net.on("welcome", () => this.requestSync(0)));
    if (!this.view) mount(root, h("p.loading", {}, "게임을 불러오는 중…"));
    else this.render();
    this.requestSync(0);
  }

  close() {
    this.unsubs.forEach((u) => u());
    this.unsubs = [];
  }

  requestSync(delay = SYNC_DELAY_MS) {
    clearTimeout(this.syncTimer);
    this.syncTimer = setTimeout(() => net.send({ type: "sync", game_id: this.id }), delay);
  }

  onEvent(f) {
    if (f.game_id !== this.id) return;
    this.learnClock(f);
    if (typeof f.game_seq === "number") {
      if (f.game_seq <= this.gameSeq) return; // already part of the view we hold
      this.gameSeq = f.game_seq;
    }
    if (this.table?.onEvent) this.table.onEvent(this, f.event, f);
    this.requestSync();
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

  onView(f) {
    if (f.game_id && this.id && f.game_id !== this.id) return;
    if (!this.id) this.reset(f.game_id);
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
    if (!this.holdRender) this.render();
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
    if (!this.view) return;
    if (!this.table) {
      mount(this.root, h("p", {}, "알 수 없는 게임이에요."));
      return;
    }
    this.table.render(this, this.root);
    clock.refreshTimers();
  }

  /** Send a game action; a refusal is shown with its Korean message. */
  async act(action) {
    const f = await net.action(this.id, action);
    if (f.type === "error") {
      this.refused(f);
      return null;
    }
    this.refusal = null;
    this.requestSync(0);
    return f;
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
    } else {
      toast(this.refusal.message, "error");
    }
    clearTimeout(this.refusalTimer);
    this.refusalTimer = setTimeout(() => {
      this.refusal = null;
      const b = document.getElementById("refusal");
      if (b) b.hidden = true;
    }, 5000);
  }

  leave() {
    if (this.view && !this.view.finished && this.mySeatIsHuman()) {
      if (!confirm("게임을 나가면 봇이 내 자리를 이어받아요. 나갈까요?")) return;
      net.action(this.id, { type: "leave" });
    }
    this.done();
  }

  /** Back to the lobby for good: a reload no longer brings this game back. */
  done() {
    store.del(`match.${this.id}`);
    store.set(`left.${this.id}`, true);
    this.close();
    location.hash = "#/";
  }

  mySeatIsHuman() {
    const s = this.seat();
    const seatInfo = this.view?.seats?.[s];
    return s !== null && s !== undefined && !(seatInfo && (seatInfo.substituted || seatInfo.bot));
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
export function timerEl(ctl, gameT, totalMs = null) {
  const at = ctl.at(gameT);
  if (at === null || ctl.view?.paused) return h("span.timer.none");
  return h("span.timer", { dataset: { deadline: String(at), ...(totalMs ? { total: String(totalMs) } : {}) },
    title: "남은 시간" }, h("span.secs", {}, ""), "초");
}

export function gameHeader(ctl, extra = []) {
  const meta = GAMES[ctl.info?.game] || { name: "" };
  return h("div.game-head", {},
    h("h1", {}, meta.name),
    extra,
    h("span.spacer"),
    h("a.rules-link", { href: `#/rules/${ctl.info?.game}`, target: "_blank" }, "규칙"),
    button("나가기", () => ctl.leave(), { class: "small", dataset: { act: "leave" } }));
}

export function refusalBox() {
  const r = game.refusal && game.refusal.until > Date.now() ? game.refusal : null;
  return h("p#refusal.refusal", { role: "alert", hidden: !r, dataset: r ? { code: r.code } : {} },
    r ? r.message : "");
}

export function autopilotBar(ctl, on) {
  if (!on) return null;
  return h("div.banner.autopilot", { role: "status" },
    "시간이 세 번 지나 자동 진행 중이에요.",
    button("직접 하기", () => ctl.act({ type: "resume" }), { class: "primary", dataset: { act: "resume" } }));
}

export function resultsPanel(ctl, rows, title = "게임 결과") {
  return h("section.results", { role: "dialog", "aria-label": title },
    h("h2", {}, title),
    rows,
    h("div.row.actions", {},
      button("로비로", () => ctl.done(), { class: "primary", dataset: { act: "lobby" } })));
}
