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
    this.deadline = null; // {seat, at (server ms), total}
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
  }

  reset(id) {
    this.id = id;
    this.view = null;
    this.gameSeq = 0;
    this.deadline = null;
    this.tableState = {};
  }

  names() {
    const out = {};
    for (const p of this.info?.players || []) {
      out[p.seat] = p.kind === "bot" ? `봇 ${({ easy: "쉬움", normal: "보통", hard: "어려움" })[p.level] || ""}`.trim()
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
    if (f.deadline) this.setDeadline(f.deadline);
    if (typeof f.game_seq === "number") {
      if (f.game_seq <= this.gameSeq) return; // already part of the view we hold
      this.gameSeq = f.game_seq;
    }
    if (this.table?.onEvent) this.table.onEvent(this, f.event, f);
    this.requestSync();
  }

  onView(f) {
    if (f.game_id && this.id && f.game_id !== this.id) return;
    if (!this.id) this.reset(f.game_id);
    this.view = f.view;
    if (typeof f.game_seq === "number") this.gameSeq = Math.max(this.gameSeq, f.game_seq);
    if (f.deadline) this.setDeadline(f.deadline);
    else if (f.view && typeof f.view.remaining_ms === "number" && !this.deadline) {
      this.setDeadline({ remaining_ms: f.view.remaining_ms, seat: f.view.turn ?? null });
    }
    if (!this.info || !this.info.game) {
      this.info = { game: f.view?.game, seat: f.view?.seat, players: [], options: {} };
    }
    if (!this.table) this.table = TABLES[this.info.game] || null;
    if (this.info.seat === undefined && typeof f.view?.seat === "number") this.info.seat = f.view.seat;
    if (!this.holdRender) this.render();
  }

  setDeadline(d) {
    const at = typeof d.server_ms === "number" ? d.server_ms : clock.serverNow() + (d.remaining_ms || 0);
    if (d.server_ms === null && d.remaining_ms === null) { this.deadline = null; return; }
    this.deadline = { seat: d.seat ?? null, at, total: d.total_ms || null };
  }

  /** Tables call this while they animate; render() runs when the last one ends. */
  hold() { this.holdRender += 1; }
  release() {
    this.holdRender = Math.max(0, this.holdRender - 1);
    if (!this.holdRender) this.render();
  }

  render() {
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
    this.requestSync(0);
    return f;
  }

  refused(f) {
    const box = document.getElementById("refusal");
    if (box) {
      box.textContent = f.message || f.code;
      box.dataset.code = f.code;
      box.hidden = false;
      clearTimeout(this.refusalTimer);
      this.refusalTimer = setTimeout(() => { box.hidden = true; }, 5000);
    } else {
      toast(f.message || f.code, "error");
    }
  }

  leave() {
    if (this.view && !this.view.finished && this.mySeatIsHuman()) {
      if (!confirm("게임을 나가면 봇이 내 자리를 이어받아요. 나갈까요?")) return;
      net.action(this.id, { type: "leave" });
    }
    store.del(`match.${this.id}`);
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

export function showGame(root, id) {
  game.open(root, id);
}

/** Shared pieces of the three tables. */
export function timerEl(ctl, seatFilter = undefined) {
  const d = ctl.deadline;
  if (!d || (seatFilter !== undefined && d.seat !== seatFilter)) return h("span.timer.none");
  const total = d.total || null;
  return h("span.timer", { dataset: { deadline: String(d.at), ...(total ? { total: String(total) } : {}) },
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
  return h("p#refusal.refusal", { role: "alert", hidden: true });
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
      button("로비로", () => { store.del(`match.${ctl.id}`); ctl.close(); location.hash = "#/"; }, { class: "primary", dataset: { act: "lobby" } })));
}
