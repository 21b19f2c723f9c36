// The lobby: guest sign-in with a nickname, quick match per game and table
// size, private rooms by code, ratings, links to each game's rules.
import { h, mount, button, toast, announce, oneAtATime } from "./ui.js";
import { net } from "./net.js";
import * as store from "./store.js";
import { state, GAMES, LEVELS, roomCode, hangulTyped, HANGUL_CODE, NICK_MAX, NICK_TOO_LONG, nicknameTooLong } from "./state.js";
import { signInAsGuest } from "./identity.js";
import { accountBox, claimBox, ratingLabel } from "./records.js";
import { liveBox } from "./watch.js";
import { game } from "./game.js";

let unsubs = [];

export function showLobby(root) {
  unsubs.forEach((u) => u());
  unsubs = [];
  if (!store.get("token", null)) return mount(root, signIn());
  const live = liveBox(); // 관전: kept across re-renders (it refreshes itself)
  // What a player is filling in (seats, bot level, a room code) is kept
  // across re-renders too: a `ratings` or queue frame that comes meanwhile
  // must not wipe it.
  const games = h("div.games", {}, Object.keys(GAMES).map(gameCard));
  const join = joinBox();
  // the account box too: a nickname being typed in a box drawn anew lost
  // its caret and the syllable being composed (IME audit)
  const account = accountBox(() => render());
  // a syllable being composed (a Hangul IME) is not drawn over: moving its
  // box split it (뮤 + 뮻 → 뮤뮻); the redraw waits for the syllable
  let composing = false;
  let due = false;
  const composed = () => {
    composing = false;
    if (due) { due = false; render(); }
  };
  for (const box of [join, account]) {
    box.addEventListener("compositionstart", () => { composing = true; });
    box.addEventListener("compositionend", composed);
    box.addEventListener("focusout", () => { if (composing) composed(); }); // (one never ended)
  }
  let page = null;
  const render = () => {
    // another screen took #app (a game's table): the lobby is gone, and a
    // `ratings` frame (sent at a game's end) must not draw it back over it
    if (page && !page.isConnected) {
      unsubs.forEach((u) => u());
      unsubs = [];
      return;
    }
    if (composing) { due = true; return; }
    // drawn again (a `ratings` frame, the queue, a room's change), the page
    // stays where the player scrolled it (it went back to the top: the 관전
    // list or 입장 box scrolled to on a phone was left)
    const again = page !== null;
    const y = window.scrollY;
    // the kept parts (the game cards, the 입장 box, 관전) move into the new
    // page before it is mounted, and the control focused in them loses the
    // focus on the way: given back (관전하기, 입장's box lost it at a redraw)
    const focused = document.activeElement;
    // in a queue or a game the server would only answer "이미 …": a game
    // under way is offered back by the banner instead (trial nitpick: 빠른
    // 대전 stayed pressable mid-game)
    const busy = lobbyBusy();
    const held = [...games.querySelectorAll('[data-act="quick"], [data-act="create"]'), ...join.querySelectorAll("button")];
    // the button pressed, disabled now: the focus goes to what the player
    // may do next (the queue's 취소, the banner's way back), not to the page
    // (a11y audit: 빠른 대전 left it on <body>, 취소 many Tabs away)
    const lost = busy && held.includes(focused);
    for (const b of held) b.disabled = busy;
    // drawn anew only when it changes: a focused 관전하기 taken out of the
    // page before the redraw lost the keyboard's place
    const slot = join.querySelector(".late-slot");
    const late = state.lateRoom ? `${state.lateRoom.code}:${state.lateRoom.game_id}` : "";
    if (slot.dataset.late !== late) {
      slot.dataset.late = late;
      slot.replaceChildren(...[lateLine()].filter(Boolean));
    }
    page = h("section.page.lobby", {},
      h("h1.visually-hidden", {}, "로비"),
      gameBanner(),
      roomBanner(),
      queueBanner(),
      games,
      join,
      live,
      ratingsBox(),
      account);
    mount(root, page);
    if (again && window.scrollY !== y) window.scrollTo(0, y);
    if (focused !== document.activeElement && focused?.isConnected && page.contains(focused)) {
      focused.focus({ preventScroll: true });
    }
    const shown = state.lateRoom?.show && page.querySelector(".late-room");
    if (shown) {
      state.lateRoom.show = false;
      shown.scrollIntoView({ block: "center" });
      shown.querySelector("button").focus({ preventScroll: true });
    }
    if (lost) {
      const next = page.querySelector(".banner button:not([disabled])") || page.querySelector("h1");
      if (next.tagName === "H1") next.tabIndex = -1;
      next.focus();
    }
  };
  render();
  unsubs.push(state.on("queue", render), state.on("ratings", render), state.on("playing", render),
    state.on("room", render), state.on("late", render));
  if (net.state === "open") net.send({ type: "ratings" });
}

/** A friend's room whose game started before they came (its invite link
 * opened late, its code typed late) said only "이미 시작한 방이에요."
 * (rooms audit): its game is offered to watch, as the refusal names it
 * (unless the host turned 관전 off). Whether `f` was that refusal. */
export function lateForRoom(f, code, show = false) {
  if (f?.type !== "error" || f.code !== "room_started" || !f.game_id) return false;
  // show: brought into view (an invite link opened on a phone: the join box
  // is a screen and a half down, only the refusal's toast was seen)
  state.lateRoom = { code, game_id: f.game_id, show };
  state.emit("late");
  return true;
}

function lateLine() {
  const late = state.lateRoom;
  if (!late) return null;
  return h("p.late-room", { dataset: { gameId: late.game_id } },
    `${late.code} 방은 이미 게임을 시작했어요. `,
    button("관전하기", () => {
      state.lateRoom = null;
      location.hash = `#/watch/${late.game_id}`;
    }, { class: "small primary", dataset: { act: "watch-late" } }));
}

/** The lobby cannot start another table: queued, in a room, or a game under way. */
function lobbyBusy() {
  return !!state.queue || !!state.room || game.playsNow();
}

function signIn() {
  const out = store.signedOut();
  const input = h("input#nickname", { name: "nickname", maxlength: 4 * NICK_MAX, autocomplete: "nickname",
    placeholder: "닉네임 (1~16자)", value: out ? "" : store.lastNickname() });
  const msg = h("p.form-error", { role: "alert" });
  const signUp = oneAtATime(signInAsGuest);
  const submit = async (ev) => {
    ev.preventDefault();
    msg.textContent = "";
    const nickname = input.value.trim();
    if (!nickname) { // our own words, not the browser's English "Please fill out this field."
      msg.textContent = "닉네임을 입력해 주세요.";
      input.focus();
      return;
    }
    if (nicknameTooLong(nickname)) {
      msg.textContent = NICK_TOO_LONG;
      input.focus();
      return;
    }
    const r = await signUp(nickname); // the lasting identity (identity.js); offline: its words
    if (!r) return; // (the first tap's answer is on its way)
    if (!r.ok) {
      msg.textContent = r.body.message || r.body.detail?.message || "닉네임을 확인해 주세요.";
      return;
    }
    store.del("session");
    store.set("last_seq", 0);
    net.connect();
    // drawn once: by the address's hashchange when it changes (drawn here
    // as well, the lobby came twice, the second over what was typed)
    if (location.hash === "#/") showLobby(document.getElementById("app"));
    else location.hash = "#/";
  };
  return h("section.page.signin", {},
    h("h1", {}, "시작하기"), // the top bar already says 딴짓
    h("p.lead", {}, "원카드 · 줄줄이 벌점 · 하카 카드를 친구나 봇과 함께해요."),
    // refused: not "로그아웃했어요" — the player did not, and may have had the
    // credential used elsewhere (identity audit)
    out ? h("p.note.signed-out", { role: "status", dataset: { why: out } },
      out === "refused" ? "이 기기의 로그인 정보를 더 이상 쓸 수 없어요 (다른 곳에서 쓰였거나 오래 쓰지 않아 만료됐어요). "
        : "로그아웃했어요. ",
      "여기서 새로 시작하면 기록과 레이팅이 없는 ",
      h("strong", {}, "새 계정"), "이에요. 이전 계정은 아래에 다른 기기에서 받은 코드를 넣어야 이어서 할 수 있어요.") : null,
    h("form.card-box", { onsubmit: submit, novalidate: true },
      h("label", { for: "nickname" }, "닉네임"),
      input,
      h("button.primary", { type: "submit" }, "손님으로 시작하기"),
      msg),
    claimBox(),
    h("nav.rule-links", {}, "규칙 보기: ",
      Object.entries(GAMES).map(([g, m]) => h("a", { href: `#/rules/${g}` }, m.name))),
  );
}

/** The game this tab plays, left for the lobby by the top bar's 딴짓: the
 * way back to it (there was none but a reload, and 빠른 대전 only said
 * "이미 게임 중이에요.": trial finding). */
function gameBanner() {
  const name = GAMES[game.info?.game]?.name || "";
  const toGame = () => { location.hash = `#/game/${game.id}`; };
  // a game that ended while the lobby was shown: said, with its result (it
  // ended silently, the banner just gone: trial nitpick)
  if (game.endedUnseen()) {
    return h("div.banner.ended", { role: "status" }, `${name} 게임이 끝났어요.`,
      button("결과 보기", toGame, { class: "primary", dataset: { act: "see-result" } }));
  }
  if (!game.playsNow()) return null;
  return h("div.banner.playing", { role: "status" },
    `${name} 게임이 진행 중이에요.`,
    button("게임으로 돌아가기", toGame, { class: "primary", dataset: { act: "back-to-game" } }));
}

/** The room this player sits in, left for the lobby by the top bar's 딴짓:
 * the way back to it (every button of the lobby answered "이미 방에 들어가
 * 있어요.", and only the browser's back button led there: rooms audit). */
function roomBanner() {
  if (!state.room || game.playsNow()) return null;
  const name = GAMES[state.room.game]?.name || "";
  return h("div.banner.in-room", { role: "status" },
    `${name} 방(코드 ${state.room.code})에 들어가 있어요.`,
    button("방으로 돌아가기", () => { location.hash = "#/room"; }, { class: "primary", dataset: { act: "back-to-room" } }));
}

// a quick match is a table within ~15 s (bots fill it then): one still
// waiting after a minute says so — no shard could take its game (every one
// full or draining: the queue waits, overload audit), or the lobby is
// changing leaders — rather than spinning on as if all were well
export const LONG_WAIT_MS = 60_000;
const LONG_WAIT_TEXT = "평소보다 오래 걸리고 있어요. 계속 기다리거나 취소할 수 있어요.";
let longWaitTimer = 0;

function queueBanner() {
  clearTimeout(longWaitTimer);
  if (!state.queue) return null;
  const name = GAMES[state.queue.game]?.name || state.queue.game;
  const waited = Date.now() - (state.queue.ms || Date.now());
  if (waited < LONG_WAIT_MS) {
    longWaitTimer = setTimeout(() => {
      state.emit("queue");
      // said too (the banner's words are not read when they change)
      if (state.queue && document.querySelector(".banner.queue .long-wait")) announce(LONG_WAIT_TEXT);
    }, LONG_WAIT_MS - waited + 50);
  }
  // (said by quick(): a status inserted with its words is often not read)
  return h("div.banner.queue", {},
    h("span.spinner", { "aria-hidden": "true" }),
    `${name} ${state.queue.seats}인 게임 상대를 찾고 있어요…`,
    waited >= LONG_WAIT_MS ? h("span.long-wait", {}, ` ${LONG_WAIT_TEXT}`) : null,
    button("취소", async () => {
      const game = state.queue.game;
      const f = await net.ask({ type: "cancel_queue" }, ["queue_cancelled"], toast);
      if (f?.code === "not_queued" && state.queue) { // e.g. shown while asked again (main.js queueAgain)
        state.queue = null;
        state.emit("queue");
      }
      // the banner gone with the focus: back to the game's 빠른 대전
      if (!state.queue && document.activeElement === document.body) {
        document.querySelector(`.game-card[data-game="${game}"] [data-act="quick"]`)?.focus();
      }
    }));
}

function gameCard(g) {
  const meta = GAMES[g];
  const chosen = store.lastSeats(g, meta.seats, meta.defaultSeats);
  // named with their game (three "인원", three "봇 난이도" alike: a11y audit)
  const seatSel = h("select", { "aria-label": `인원: ${meta.name}`, name: `seats-${g}`,
    onchange: () => store.rememberSeats(g, Number(seatSel.value)) },
  meta.seats.map((n) => h("option", { value: n, selected: n === chosen }, `${n}명`)));
  const saved = store.lastBotLevel(g);
  const levelSel = h("select", { "aria-label": `봇 난이도: ${meta.name}`, name: `level-${g}`, title: "빈자리를 채울 봇의 난이도",
    onchange: () => store.rememberBotLevel(g, levelSel.value) },
  Object.entries(LEVELS).map(([k, v]) => h("option", { value: k, selected: k === saved }, `봇 ${v}`)));
  const quick = async () => {
    const seats = Number(seatSel.value);
    state.queueLevel = levelSel.value; // asked again after a lost connection (main.js requeue)
    const f = await net.ask({ type: "queue", game: g, seats, level: levelSel.value }, ["queued", "matched"], toast);
    if (f?.type === "queued") announce(`${meta.name} ${seats}인 게임 상대를 찾고 있어요. 취소할 수 있어요.`);
  };
  const create = async () => {
    await net.ask({ type: "room_create", game: g, seats: Number(seatSel.value) }, ["room"], toast);
  };
  return h("article.game-card", { dataset: { game: g } },
    h("h2", {}, meta.name),
    h("p", {}, meta.blurb),
    h("div.row", {},
      meta.seats.length > 1 ? seatSel : h("span.fixed", {}, "4명"),
      levelSel,
      // named with their game: a screen reader's list of buttons had three
      // of each, alike (a11y trial)
      button("빠른 대전", quick, { class: "primary", disabled: lobbyBusy(), dataset: { act: "quick" },
        "aria-label": `빠른 대전: ${meta.name}` }),
      button("방 만들기", create, { disabled: lobbyBusy(), dataset: { act: "create" }, "aria-label": `방 만들기: ${meta.name}` })),
    h("p.muted.small", {}, "상대가 없으면 잠시 기다린 뒤 고른 난이도의 봇과 해요 (방을 만들면 혼자서 봇과 바로 할 수 있어요)."),
    h("a.rules-link", { href: `#/rules/${g}` }, `${meta.name} 규칙`),
  );
}

// the room code being typed, kept while the lobby is drawn anew (the
// welcome of a connection, the address set after sign-in): a new box
// came up empty, and 입장 then said to type a code (seen in a full run)
let typedCode = "";

function joinBox() {
  const code = h("input", { name: "code", placeholder: "방 코드", autocapitalize: "characters",
    autocomplete: "off", autocorrect: "off", spellcheck: "false",
    maxlength: 12, "aria-label": "방 코드", value: typedCode,
    oninput: () => { typedCode = code.value; } });
  const join = async (ev) => {
    ev.preventDefault();
    // a try's words replace the last try's (an empty try's "…넣어 주세요."
    // stayed beside the next one's "방을 찾을 수 없어요": rooms audit)
    for (const t of document.querySelectorAll("#toasts .toast.error")) t.remove();
    if (state.lateRoom) { state.lateRoom = null; state.emit("late"); }
    if (hangulTyped(code.value)) { toast(HANGUL_CODE, "error"); code.focus(); return; }
    const c = roomCode(code.value);
    if (!c) { toast("친구에게 받은 방 코드를 넣어 주세요.", "error"); code.focus(); return; } // it did nothing
    if (/[01IO]/.test(c)) { // never in a code (rooms.py CODE_ALPHABET): said, not "not found"
      toast("방 코드에는 0·O·1·I가 없어요. 받은 코드를 다시 확인해 주세요.", "error");
      code.focus();
      return;
    }
    const f = await net.ask({ type: "room_join", code: c }, ["room"], toast);
    if (f?.type === "room") typedCode = "";
    lateForRoom(f, c);
  };
  return h("form.card-box.join", { onsubmit: join },
    h("h2", {}, "친구 방에 들어가기"),
    h("div.row", {}, code, h("button", { type: "submit", disabled: lobbyBusy() }, "입장")),
    h("div.late-slot", { "aria-live": "polite" }));
}

function ratingsBox() {
  const rows = (state.ratings || []).map((r) => {
    const name = GAMES[r.game]?.name || r.game;
    return h("tr", { dataset: { game: r.game } },
      h("td", {}, name),
      h("td.num", {}, ratingLabel(r)),
      h("td.num", {}, String(r.games ?? 0)),
      // (on a phone the two links stack, not "순위 ·" over "내 기록": trial)
      h("td", {}, h("span.links", {}, h("a", { href: `#/board/${r.game}`, "aria-label": `순위: ${name}` }, "순위"),
        h("a", { href: `#/history/${r.game}`, dataset: { act: "history" }, "aria-label": `내 기록: ${name}` }, "내 기록"))));
  });
  return h("section.card-box.ratings", {},
    h("h2", {}, "내 레이팅"),
    rows.length
      ? h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "게임"), h("th.num", {}, "레이팅"), h("th.num", {}, "게임 수"),
        h("th", {}, h("span.visually-hidden", {}, "순위와 내 기록")))), // (an empty header: a11y audit)
        h("tbody", {}, rows))
      : h("p.muted", {}, "아직 레이팅이 없어요. 한 판 해 보세요!"));
}
