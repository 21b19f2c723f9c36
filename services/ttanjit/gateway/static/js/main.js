// The app: a hash router over the screens, and the glue between the
// session (net.js) and the screens.
import { net, REPLACED_MESSAGE } from "./net.js";
import * as store from "./store.js";
import { app, toast, newScreen } from "./ui.js";
import { screenTitle } from "./alerts.js";
import { showLobby, lateForRoom } from "./lobby.js";
import { showRoom } from "./room.js";
import { showRules } from "./rules.js";
import { game, showGame } from "./game.js";
import { state, roomNews, roomCode } from "./state.js";
import { showBoard, showHistory, showReplay } from "./records.js";
import { showWatch, watcher } from "./watch.js";

let routed = null; // the address last shown
const SCREEN_TITLES = { rules: "규칙", room: "방", game: "게임", board: "순위", history: "내 기록",
  replay: "다시 보기", watch: "관전" };

let rulesFrom = null; // the screen the rules were opened from, to go back to
/** A toast for the screen the address just set leads to (its hashchange
 * comes later, and drops the toasts shown before it but kept ones). */
function sayOnScreen(text, kind = "info") {
  toast(text, `${kind} keep`);
}

function route() {
  const [, screen, arg] = (location.hash || "#/").split("/");
  // a new screen opens at its top (the room opened scrolled by the lobby's
  // offset, its code under the top bar: trial finding); the same screen
  // drawn again (a reconnect's welcome) keeps its place, and its toasts
  // (a rename reconnects: its "이제 …로 보여요." was wiped at once)
  const moved = location.hash !== routed;
  // the results of a game that is over, left another way than 로비로 (the
  // top bar's 딴짓, the browser's back, 내 기록; not its rules, a look
  // away): done with it all the same (every reload brought them back:
  // trial finding)
  if (moved && screen !== "rules" && game.id && routed === `#/game/${game.id}` && game.isOver()) game.doneWith();
  if (moved) {
    window.scrollTo(0, 0);
    // the tab's title names the screen; its heading takes the focus
    screenTitle(SCREEN_TITLES[screen] ?? null);
    if (routed !== null) newScreen();
  }
  const from = routed;
  routed = location.hash;
  // a toast belongs to the screen it was shown on (the table's announcements)
  // (but one said for the screen it leads to: `keep`)
  if (moved && screen !== "game") for (const t of document.querySelectorAll("#toasts .toast:not(.keep)")) t.remove();
  if (screen === "rules") {
    // the table, game watched or replay it was opened from is where it leads back
    if (moved && /^#\/(game|watch|replay)\//.test(from || "")) rulesFrom = from;
    else if (moved && !(from || "").startsWith("#/rules/")) rulesFrom = null;
    return showRules(app(), arg, rulesFrom);
  }
  if (screen === "join") { // a friend's invite link (room.js): joined once signed in and connected
    let code = "";
    try { code = decodeURIComponent(arg || ""); } catch { /* a broken link: as none */ }
    if (code) store.set("join", code);
    // what is shown meanwhile: the game the player is in, their room, or the
    // lobby (a player in a game was sent off it to the lobby: review)
    history.replaceState(null, "", game.playsNow() ? `#/game/${game.id}` : state.room ? "#/room" : "#/");
    route();
    if (net.state === "open" && net.welcome) joinInvited(game.playsNow()); // else on the welcome
    return undefined;
  }
  if (!store.get("token", null)) return showLobby(app());
  if (screen === "room" && state.room) return showRoom(app());
  if (screen === "game" && arg) return showGame(app(), arg);
  if (screen === "board") return showBoard(app(), arg); // issue 15: 순위, 내 기록, 다시 보기
  if (screen === "history") return showHistory(app(), arg);
  if (screen === "replay" && arg) return showReplay(app(), arg);
  if (screen === "watch" && arg) return showWatch(app(), arg); // 관전
  return showLobby(app());
}

export function go(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

/** This tab takes the player back from another (이 창에서 계속하기). */
function useHere() {
  // the queue the other tab still waited in as it closed (its close took
  // the player out of it): this tab waits in it again, as after a lost
  // connection — it forgot its own when replaced, and the queue ended
  // unsaid (a 빠른 대전 left waiting while the rules were read in a new tab)
  const q = handedQueue;
  handedQueue = null;
  // (as a queue kept across a reload: 10 minutes — a tab looked at hours
  // later queued a game long forgotten: review finding)
  if (q && !state.queue && q.player === state.player && Date.now() - q.handed < QUEUE_KEPT_MS) {
    state.queueLevel = q.level || state.queueLevel; // (a queue shown from a welcome has none)
    showQueued({ game: q.game, seats: q.seats, ms: q.ms }, q.player);
  }
  net.connect();
  route();
}

function updateHeader() {
  document.getElementById("who").textContent = store.get("nickname", "") || "";
  const n = document.getElementById("net");
  n.dataset.state = net.state;
  document.body.dataset.net = net.state; // replaced: its table plays nothing (app.css)
  document.getElementById("app").dataset.note = net.state === "replaced" ? REPLACED_MESSAGE : "";
  // connected once, each try again is "다시 연결 중…" (it went 다시 연결 중… /
  // 연결 중… / 다시 연결 중… over one lost connection: trial nitpick)
  // (a full gateway refused us: said until one takes us, docs/websocket.md 5)
  const again = net.busy ? "접속한 사람이 많아요 · 다시 연결 중…" : "다시 연결 중…";
  const connecting = net.busy || net.welcome ? again : "연결 중…";
  let text = { open: "연결됨", connecting, closed: again, replaced: "다른 곳에서 접속함", idle: "" }[net.state] || "";
  // moves kept to send once connected: said where the connection is (the
  // table went on saying 내 차례예요 with nothing to show one waits: trial)
  if ((net.state === "closed" || net.state === "connecting") && net.held()) {
    text += ` · 보낼 동작 ${net.held()}개`; // ("보낼 수 1개" read as "can send 1": copy audit)
  } else if (net.state === "open" && net.sending()) {
    text += " · 보내는 중…"; // a slow network, or a silent drop not noticed yet (network audit)
  }
  // (role=status: rewritten at each move's pending change, "연결됨" may
  // be said again after every move: a11y audit)
  if (n.textContent !== text) n.textContent = text;
  // another tab took this player over: this one waits until asked to go on
  // here (it takes the player back; the other tab then waits in turn)
  const here = document.getElementById("use-here");
  here.hidden = net.state !== "replaced";
  here.onclick = useHere;
}

// replaced: said by the header (read out: role="status"), the note atop every
// screen and any refused press; no toast (one covered the lobby's game
// banner on a phone for its 8 s: trial finding)
net.on("net", updateHeader);
net.on("pending", updateHeader);
// a move sent before a reload, refused once sent again (its turn over meanwhile): said
net.on("restored", (f) => { if (f.type === "error") toast(f.message || f.code, "error"); });
// another tab took this player over, queue and all: this one forgets it
// (a reload here later must not queue again what the other tab cancelled)
net.on("net", () => { if (net.state === "replaced" && state.queue) forgetQueue(); });

net.on("welcome", (f) => {
  game.known(f); // the seats' names, before the game screen opens
  state.player = f.player;
  // the nickname as last set on any device (this tab's token may be older)
  if (f.nickname && f.nickname !== store.get("nickname", "")) {
    store.set("nickname", f.nickname);
    store.rememberNickname(f.nickname);
  }
  // the matchmaker's ratings (without lobby_known it did not answer: the
  // ones shown stay, asked again when `lobby` says it is back)
  if (f.lobby_known) state.ratings = f.ratings || [];
  const [, screen, arg] = (location.hash || "#/").split("/");
  const told = f.room || f.lobby_known ? roomNow(f, screen) : "";
  requeue(f);
  updateHeader();
  const left = f.game_id && store.get(`left.${f.game_id}`, false); // results seen, or left
  // a game that is over takes only the lobby, as `game_result` does: not a
  // screen the player chose (내 기록, rules, a replay); nor does one under
  // way, which is said (a tab opened on 내 기록 or a replay during a game
  // showed the table instead: tabs audit) — the lobby leads back to it
  const chosen = screen && screen !== "game" && (f.finished || screen !== "room");
  if (f.game_id && !left && chosen && !f.finished) {
    sayOnScreen("게임이 진행 중이에요. 로비에서 게임으로 돌아갈 수 있어요.");
  }
  if (f.game_id && !left && !chosen && !(screen === "game" && arg === f.game_id)) {
    go(`#/game/${f.game_id}`);
  } else if (!f.game_id && screen === "game") {
    // the game ended while we were away: the game screen asks for its result
    route();
  } else if (!f.game_id && state.room && screen !== "room") {
    go("#/room");
  } else {
    route();
  }
  if (told) toast(told);
  joinInvited(!!f.game_id && !f.finished);
});

/** The room of the invite link this tab was opened with (#/join/CODE), once
 * the player is connected: joined as the lobby's 입장 would (the friend
 * had to find the code box, a screen and a half down on a phone, and type
 * it: rooms audit). Not over a game or a room the player is in: said. */
async function joinInvited(playing) {
  const saved = store.get("join", null);
  if (!saved) return;
  store.del("join");
  const code = roomCode(saved);
  if (playing) { sayOnScreen("게임이 진행 중이라 초대받은 방에 들어가지 않았어요.", "error"); return; }
  if (state.room) {
    if (state.room.code !== code) sayOnScreen("이미 다른 방에 들어가 있어 초대받은 방에 들어가지 않았어요.", "error");
    else go("#/room");
    return;
  }
  const f = await net.ask({ type: "room_join", code }, ["room"], sayOnScreen);
  // in, from whatever was shown (a finished game's results stayed, the room
  // frame taking no screen but the lobby's: review)
  if (f?.type === "room") go("#/room");
  if (lateForRoom(f, code, true)) go("#/"); // its game to watch: offered in the lobby, in view
}

/** The queue this tab waits in, kept across a reload (the page's memory
 * is gone, and the closed socket took the player out of the queue: the
 * welcome after it queues again, as after a lost connection; a phone's
 * browser reloads a tab it put away) — for the player who queued, for 10
 * minutes (a quick match waits seconds). */
const QUEUE_KEPT_MS = 10 * 60_000;
const savedQueue = store.get("queue", null);
if (savedQueue?.game && savedQueue.player === store.get("player", null)
    && Date.now() - (savedQueue.ms || 0) < QUEUE_KEPT_MS) {
  state.queue = savedQueue;
  state.queueLevel = savedQueue.level || "";
} else {
  store.del("queue");
}
state.on("queue", () => {
  if (state.queue) {
    store.set("queue", { game: state.queue.game, seats: state.queue.seats, level: state.queueLevel,
      player: state.queue.player, ms: state.queue.ms || Date.now() });
  } else {
    store.del("queue");
  }
});

function forgetQueue() {
  state.queue = null;
  state.emit("queue");
}

/** The room the matchmaker says the player is in (`welcome` with
 * `lobby_known`, `lobby`); what to tell them, if anything. */
function roomNow(f, screen) {
  if (f.room) {
    state.room = f.room;
    return "";
  }
  if (!state.room) return "";
  // in no room now: e.g. away longer than a room seat waits (RULES.md 4's
  // 60 s), or left in another tab; a room screen showed the room as it
  // was, 시작 said "이미 시작한 방이에요." and 방 나가기 "방에 들어가 있지
  // 않아요." (trial finding). Another screen's is a started room's: gone
  state.room = null;
  if (screen !== "room" || f.game_id) return "";
  location.hash = "#/";
  return "이제 방에 들어가 있지 않아요."; // said on the lobby (a new screen drops toasts)
}

// The matchmaker's word, late: it did not answer `hello` (a leader change),
// so `welcome` had no `lobby_known` (its queue: asked again then, requeue)
net.on("lobby", (f) => {
  net.send({ type: "ratings" }); // the welcome had none of the matchmaker's
  const [, screen] = (location.hash || "#/").split("/");
  const told = roomNow(f, screen);
  if (f.queued) showQueued(f.queued, state.player); // e.g. its ticket kept while this tab's re-queue went unanswered
  if (told) {
    route();
    toast(told);
  } else if (f.room && screen !== "room" && screen !== "game") {
    go("#/room");
  } else {
    state.emit("room");
  }
});

// the re-queue after a reconnect (queueAgain)
const QUEUE_AGAIN_MS = [500, 1000, 2000, 3000]; // then every 3 s
const QUEUE_AGAIN_FOR_MS = 60_000;
const NO_ANSWER = { type: "error", code: "matchmaker_unavailable", message: "서버가 응답하지 않아요. 잠시 후 다시 해 주세요." };
let queueAgainRun = 0;

/** The queue the matchmaker names (`welcome`, `lobby`), shown. */
function showQueued(queued, player) {
  state.queue = { ...(state.queue || {}), ...queued, player };
  state.emit("queue");
}

/** The quick-match queue across a reconnect (docs/websocket.md welcome):
 * waiting in it from another tab, this one shows it; dropped from it
 * because this connection was lost (the matchmaker does not match a player
 * who is away), this tab queues again for the same game. */
function requeue(f) {
  queueAgainRun += 1; // a re-queue of an earlier connection's ends
  if (f.queued) {
    showQueued(f.queued, f.player);
    return;
  }
  const q = state.queue;
  if (!q) return;
  // seated meanwhile (nothing to wait for), or another player's (signed in since)
  if (f.game_id || f.room || !q.game || q.player !== f.player) {
    forgetQueue();
    return;
  }
  queueAgain({ type: "queue", game: q.game, seats: q.seats, level: state.queueLevel }, f.player);
}

/** The re-queue after a reconnect, asked again while the matchmaker does
 * not answer, for about a minute (a leader change: a few seconds; the
 * gateway asks for `hello` the same way), its misses unsaid: a reconnect
 * then lost the queue with "매칭 서버에 잠시 연결할 수 없어요." while the
 * lobby, answering soon after, may have kept the player's ticket — matched
 * later from a lobby that showed no queue. The queue stays shown (and kept
 * across a reload) meanwhile: a drop or a reload asks again. Another
 * welcome, 취소, a room, a game, another tab or signing out ends it. */
async function queueAgain(frame, player) {
  const run = queueAgainRun;
  const until = Date.now() + QUEUE_AGAIN_FOR_MS;
  const going = () => run === queueAgainRun && state.player === player && state.queue && !state.room;
  for (let i = 0; ; i += 1) {
    // no answer is the lobby's too (the gateway gives it 10 s, as this tab
    // does); asked again, the same queue is answered with its ticket
    const f = await net.request(frame, ["queued", "matched"]).catch(() => NO_ANSWER);
    // queued, or matched (`matched` follows `match_found`): said by their frames
    if (f.type !== "error" || f.code === "match_found" || !going()) return;
    if (f.code !== "matchmaker_unavailable" || Date.now() > until) {
      forgetQueue();
      toast(f.message || f.code, "error");
      return;
    }
    await new Promise((r) => setTimeout(r, QUEUE_AGAIN_MS[Math.min(i, 3)] * (0.8 + 0.4 * Math.random())));
    if (!going()) return;
  }
}

net.on("room", (f) => {
  const before = state.room;
  state.room = f.room;
  // a room just entered takes the screen; a change in it does not (a
  // friend's phone going to sleep pulled the host off the rules, a game
  // watched or the lobby: review) — the lobby leads back to it
  const entered = !before || before.code !== f.room.code;
  if (entered && !location.hash.startsWith("#/room") && !location.hash.startsWith("#/game")) go("#/room");
  state.emit("room");
  if (location.hash.startsWith("#/room")) tellRoomNews(roomNews(before, f.room, state.player));
});

const AWAY_SAID_MS = 5000;
const awaySaying = new Map(); // player → the timer that will say their connection went

/** The room's news as toasts; a connection gone is said after 5 s unless
 * back by then (every reload of a friend's said "…의 연결이 끊겼어요." and
 * "…이 다시 연결됐어요." a second apart: review). The seat's badge shows at once. */
function tellRoomNews(news) {
  for (const n of news) {
    if (n.away) {
      clearTimeout(awaySaying.get(n.away));
      awaySaying.set(n.away, setTimeout(() => {
        awaySaying.delete(n.away);
        if (location.hash.startsWith("#/room") && state.room?.members?.some((m) => m.player === n.away && m.away)) toast(n.text);
      }, AWAY_SAID_MS));
    } else if (n.back && awaySaying.has(n.back)) {
      clearTimeout(awaySaying.get(n.back)); // gone and back unsaid
      awaySaying.delete(n.back);
    } else {
      toast(n.text);
    }
  }
}

net.on("room_left", (f) => {
  if (state.room && f.code && state.room.code !== f.code) return; // an older room's, late
  state.room = null;
  if (location.hash.startsWith("#/room")) {
    location.hash = "#/";
    route(); // now: a toast goes with the screen it was shown on
  }
  if (f.message) toast(f.message); // a room seat waited its 60 s (`reason` away)
});

net.on("matched", (f) => {
  queueAgainRun += 1; // seated: nothing to queue for
  state.queue = null;
  state.emit("queue");
  state.room = null;
  game.matched(f);
  go(`#/game/${f.game_id}`);
});

// the game left its shard before we came back: its final result (docs/websocket.md 4)
net.on("game_result", (f) => {
  game.onFinal(f);
  const [, screen] = (location.hash || "#/").split("/");
  // shown from the lobby, where a returning player lands; a screen the
  // player chose (내 기록, rules, another game) is not taken away
  if (!store.get(`left.${f.game_id}`, false) && !screen) go(`#/game/${f.game_id}`);
});
net.on("rematch", (f) => game.onRematch(f));
net.on("emote", (f) => game.onEmote(f));

net.on("queued", (f) => { state.queue = { ...f, player: state.player, ms: state.queue?.ms || Date.now() }; state.emit("queue"); });
net.on("queue_cancelled", (f) => {
  forgetQueue();
  if (f.message) toast(f.message); // a drop the lobby heard late (`reason` away)
});
net.on("ratings", (f) => { state.ratings = f.ratings || []; state.emit("ratings"); });
net.on("signed_out", () => { forgetQueue(); toast("로그인 정보가 만료됐어요. 다시 시작해 주세요.", "error"); go("#/"); });

// Errors answering a lobby request are shown by the screen that asked, and
// action errors by the table; everything else (rate limits, sync) here.
// (`ratings` the matchmaker did not answer: the lobby keeps the ones it
// shows, asked again with `lobby`; a toast each lobby drawing in a leader
// change told the player nothing to do)
const SHOWN_BY_SCREEN = new Set(["queue", "cancel_queue", "room_create", "room_join", "room_leave",
  "room_options", "room_add_bot", "room_remove_bot", "room_start", "action", "rematch",
  "rematch_decline", "rematch_state", "emote", "spectate", "ratings"]);
net.on("error", (f) => {
  if (f.cmd_id || SHOWN_BY_SCREEN.has(f.ref)) return;
  if (f.code === "server_full") return; // the top bar says it while it lasts (updateHeader)
  if (f.ref === "sync" && game.final) return; // the game is over and gone: its result is shown
  if (f.ref === "sync" && f.code === "not_in_game" && location.hash.startsWith("#/game/") && !game.view) {
    game.unavailable(f); // the screen says it, with the way out
    return;
  }
  // the game this tab held is no longer the player's (left on another
  // device, or let go while away): the lobby offers other tables again
  // (its buttons stayed disabled until a reload: review finding)
  if (f.ref === "sync" && f.code === "not_in_game" && game.view && f.game_id === game.id) game.notMine();
  toast(f.message || f.code, "error");
});

// The tab of this browser that took the player from this one closing (the
// rules or 내 기록 opened beside the game, then closed): this tab, replaced,
// takes the player back once looked at, as [이 창에서 계속하기] does (the
// game went on with nobody at it, a bot taking the seat a minute later:
// tabs audit). A tab that connects says so, so a reload is not a close.
const tabs = typeof BroadcastChannel === "function" ? new BroadcastChannel("ttanjit.tabs") : null;
let holderGone = false;
let handedQueue = null; // the queue the tab that held the player was in as it closed (useHere)
function takeBackIfSeen() {
  if (!holderGone || net.state !== "replaced" || document.visibilityState !== "visible") return;
  holderGone = false;
  useHere();
}
if (tabs) {
  const me = () => store.get("player", null);
  tabs.onmessage = (e) => {
    if (!e.data || e.data.player !== me()) return;
    holderGone = e.data.type === "gone";
    handedQueue = holderGone ? e.data.queue || null : null;
    takeBackIfSeen();
  };
  window.addEventListener("pagehide", () => {
    if (net.state !== "open") return;
    const q = state.queue;
    tabs.postMessage({ type: "gone", player: me(), queue: q && q.player === me()
      ? { game: q.game, seats: q.seats, level: state.queueLevel, player: q.player, ms: q.ms, handed: Date.now() }
      : null });
  });
  net.on("welcome", () => tabs.postMessage({ type: "here", player: me() }));
  document.addEventListener("visibilitychange", takeBackIfSeen);
}

// another tab of this browser signed out, or in as someone else (a code
// from another device): this one follows, its own session of the player
// before forgotten (it went on playing as the player signed out, then stayed
// "다시 연결 중…" for good, or showed the old account's table under the new
// one's name: tabs audit)
window.addEventListener("storage", (e) => {
  if (e.key !== store.keyName("player") || e.newValue === e.oldValue) return;
  store.forgetTab();
  location.replace("#/");
  location.reload();
});

// an address set and drawn at once (location.hash then route(): a toast
// goes with it) is not drawn again (showLobby twice sent `ratings` twice)
window.addEventListener("hashchange", () => { if (location.hash !== routed) route(); });
window.addEventListener("DOMContentLoaded", () => {
  updateHeader();
  route();
  net.connect();
});
// for tests and the curious: window.ttanjit.net.drop() simulates a dropped connection
window.ttanjit = { net, state, game, watch: watcher };
