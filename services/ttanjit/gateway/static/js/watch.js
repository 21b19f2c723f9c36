// 관전 (issue 15; docs/websocket.md 3.5): the lobby's list of live games
// (GET api/live, refreshed) and the watch screen. The watch screen is the
// live table screens of game.js driven by `spectate_view` / `spectate_update`
// frames (an update: the burst's public events, then the public view after
// them) — the same animations (tables' onEvent) and timers (deadlines) —
// read-only, with the spectator count and a way back. `spectate` (the whole
// view again) is sent to start, after a reconnect and after a gap only.
import { h, mount, button, toast } from "./ui.js";
import { net } from "./net.js";
import * as identity from "./identity.js";
import { GAMES, progressText } from "./state.js";
import { GameController, botMarked, game, sayChanges, showEmotes, showPanel } from "./game.js";
import * as clock from "./clock.js";
import { seatCount } from "./seats.js";

const LIST_REFRESH_MS = 5000;

/** The lobby's 관전 box: live games, refreshed while it is in sight — the
 * box on screen (or near it) and the tab shown. Every lobby asked every 5 s
 * whatever it showed (on a phone the list is two screens down, a tab put
 * away asked on): 180 lobbies cost a gateway a tenth of a core (load tester
 * audit). Scrolled to, or the tab shown again, it asks at once. */
export function liveBox() {
  // not a live region: it was read out again every 5 s (a11y trial)
  const body = h("div.live-list", {}, h("p.muted", {}, "진행 중인 게임을 불러오는 중…"));
  const box = h("section.card-box.live", { dataset: { act: "live" } },
    h("h2", {}, "관전"), body);
  let timer = null;
  let shown = null;
  let inSight = true; // until the observer says otherwise
  let stale = false; // a refresh skipped while out of sight: asked for when back
  let first = true; // the first list is asked for wherever the box is (the
  // observer's first word, "not in sight" while the box was not yet on the
  // page, came before it and skipped it: the list stayed 불러오는 중… below)
  const sight = new IntersectionObserver((entries) => {
    inSight = entries.some((e) => e.isIntersecting);
    if (inSight && stale) load();
  }, { rootMargin: "200px" });
  sight.observe(box);
  const onShown = () => { if (document.visibilityState === "visible" && stale && inSight) load(); };
  document.addEventListener("visibilitychange", onShown);
  const load = async () => {
    clearTimeout(timer);
    if (!box.isConnected && timer !== null) { // the lobby was left
      sight.disconnect();
      document.removeEventListener("visibilitychange", onShown);
      return;
    }
    if (!first && (!inSight || document.visibilityState === "hidden")) {
      stale = true;
      timer = setTimeout(load, LIST_REFRESH_MS);
      return;
    }
    stale = false;
    first = false;
    const r = await identity.getJson("api/live");
    const now = r.ok ? JSON.stringify(r.body.games || []) : shown;
    if (r.ok && now !== shown) { // drawn again only when it changed (a focused 관전 button stays)
      shown = now;
      mount(body, liveTable(r.body.games || []));
    }
    timer = setTimeout(load, LIST_REFRESH_MS);
  };
  timer = setTimeout(load, 0);
  return box;
}

function liveTable(games) {
  if (!games.length) return h("p.muted", {}, "지금 진행 중인 게임이 없어요.");
  return h("table", {},
    h("thead", {}, h("tr", {}, h("th", {}, "게임"), h("th", {}, "참가자"), h("th.prog-col", {}, "진행"),
      h("th.num", {}, "관전"), h("th", {}, ""))),
    h("tbody", {}, games.map((g) => {
      // a player a bot stands in for says so; the bots are counted in 명
      // ("나래 + 봇 2" read as a bot named 봇2: trial finding)
      const humans = (g.players || []).map((p) => botMarked(p.nickname || `${p.seat + 1}번`, p.substituted));
      const bots = typeof g.seats === "number" ? g.seats - humans.length : 0;
      const progress = progressText(g);
      return h("tr", { dataset: { gameId: g.game_id, game: g.game } },
        h("td", {}, GAMES[g.game]?.name || g.game),
        // on a phone the progress rides under the players (app.css): a
        // column of its own ("멈춤 (모두 연결 끊김) · 1/3판") pushed 관전 off-screen
        h("td", {}, h("span.live-who", {}, humans.join(", "), bots > 0 ? [" ", h("span.bots", {}, `+ 봇 ${bots}명`)] : null),
          h("span.prog.under", {}, progress)),
        h("td.prog-col", {}, progress),
        h("td.num", {}, `${g.spectators || 0}명`),
        // my own game: back to it (관전 there said only "이미 게임 중이에요.": trial)
        h("td", {}, g.game_id === game.id && game.playsNow()
          ? button("돌아가기", () => { location.hash = `#/game/${g.game_id}`; }, { class: "small primary", dataset: { act: "back-to-game" } })
          : button("관전", () => watch(g), { class: "small", dataset: { act: "watch" },
            "aria-label": `관전: ${GAMES[g.game]?.name || g.game}, ${humans.join(", ") || "봇"}` })));
    })));
}

function watch(g) {
  location.hash = `#/watch/${g.game_id}`; // who sits where comes with the view (spectate_view)
}

/** A spectator's controller: a GameController fed by spectate frames. */
class WatchCtl extends GameController {
  constructor() {
    super();
    this.spectator = true;
  }

  open(root, id) {
    this.close();
    this.reset(id);
    this.final = null;
    this.unavailable = 0; // game_unavailable answers in a row (onError)
    this.info = { game: undefined, seat: null, players: [], options: {} };
    this.root = root;
    this.table = null;
    this.unsubs.push(net.on("spectate_update", (f) => this.onUpdate(f)));
    this.unsubs.push(net.on("spectate_view", (f) => this.onView(f)));
    this.unsubs.push(net.on("spectators", (f) => this.onWatchers(f)));
    this.unsubs.push(net.on("emote", (f) => this.onEmote(f))); // the players' reactions, at their seats
    this.unsubs.push(net.on("welcome", () => this.requestSync(0))); // reconnected: watch again
    this.unsubs.push(net.on("error", (f) => this.onError(f)));
    mount(root, h("section.page.watch", {}, h("p.loading", {}, "관전 화면을 불러오는 중…")));
    if (net.state === "open") this.requestSync(0);
  }

  requestSync(delay = 0) {
    clearTimeout(this.syncTimer);
    this.syncTimer = setTimeout(() => net.send({ type: "spectate", game_id: this.id }), delay);
  }

  /** `spectate_view`: the answer to our `spectate`, the whole public view;
   * updates continue after its game_seq. */
  onView(f) {
    if (f.game_id && f.game_id !== this.id) return;
    this.unavailable = 0;
    if (typeof f.game_seq === "number") this.gameSeq = f.game_seq;
    // who sits where, from the server: one source for a watch opened from
    // the list, from a link or gone back to (the live list's copy, kept per
    // tab, was gone then and every seat read 봇N)
    if (Array.isArray(f.players) && f.players.length) {
      this.info = { ...this.info, game: this.info.game || f.view?.game, players: f.players };
    }
    this.takeView(f);
  }

  onError(f) {
    if (f.ref !== "spectate") return;
    clearTimeout(this.syncTimer);
    // a game between shards (a failover, a drain): watched again shortly,
    // a few times; the table stays meanwhile (it froze, the watch ended)
    if (f.code === "game_unavailable" && (this.unavailable = (this.unavailable || 0) + 1) <= 5) {
      this.requestSync(2000);
      if (this.view) return;
    }
    if (this.view) { toast(f.message || f.code, "error"); return; }
    mount(this.root, h("section.page.watch", { dataset: { error: f.code } },
      h("p.form-error", { role: "alert" }, f.message || "관전할 수 없어요."),
      button("로비로", () => this.done(), { dataset: { act: "lobby" } })));
  }

  /** As the players name the seats (봇2 (보통), nicknames); a seat the
   * directory did not describe is 봇N. */
  names() {
    const out = {};
    for (let s = 0; s < seatCount(this.view); s++) out[s] = `봇${s + 1}`;
    return { ...out, ...super.names() };
  }

  seat() { return null; }
  mySeatIsHuman() { return false; }
  act() { toast("관전 중에는 카드를 낼 수 없어요."); return Promise.resolve(null); }
  askRematch() {}
  leave() { this.done(); }

  done() {
    net.send({ type: "spectate_stop" });
    this.close();
    location.hash = "#/";
  }

  close() {
    clearTimeout(this.syncTimer);
    super.close();
  }

  render() {
    if (this.holdRender || !this.root || !location.hash.startsWith(`#/watch/${this.id}`)) return;
    if (!this.view || !this.table) return;
    let page = this.root.querySelector("section.page.watch");
    let box = page?.querySelector(".watch-table");
    if (!box) {
      box = h("div.watch-table");
      page = h("section.page.watch", { dataset: { game: this.info.game || "", gameId: this.id } },
        // the badge is the status (관전 중 → 끝난 게임), not the bar with its button (a11y audit)
        h("div.watch-bar", {},
          h("span.badge.live", { role: "status" }, "관전 중"),
          h("span.watch-note", {}, "모두에게 보이는 것만 보여요 (손패는 보이지 않아요)."),
          button("로비로", () => this.done(), { class: "small", dataset: { act: "lobby" } })),
        box);
      mount(this.root, page);
    }
    this.table.render(this, box);
    showPanel(this, box);
    showEmotes(this); // the players' reactions stay at their seats through a re-render
    this.showWatchers();
    sayChanges(this); // a spectator hears whose turn it is and the newest play, as a player does
    clock.refreshTimers(); // the same countdowns as the players see
    if (this.view.finished && !page.dataset.finished) {
      // over: the bar says so, and the result's own 로비로 is the way out (app.css)
      page.dataset.finished = "true";
      page.querySelector(".watch-bar .badge.live").textContent = "끝난 게임";
    }
  }
}

export const watcher = new WatchCtl();

export function showWatch(root, id) {
  watcher.open(root, id);
}

// leaving the watch screen by any route stops watching
window.addEventListener("hashchange", () => {
  if (watcher.id && !location.hash.startsWith(`#/watch/${watcher.id}`) && watcher.unsubs.length) {
    net.send({ type: "spectate_stop" });
    watcher.close();
  }
});
