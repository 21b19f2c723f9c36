// The private room (대기방): its code, seats, bots and their levels, the
// host's options, start and leave (docs/websocket.md §3, §7).
import { h, mount, button, toast, announce } from "./ui.js";
import { net } from "./net.js";
import { state, GAMES, LEVELS, josa } from "./state.js";
import * as store from "./store.js";

let unsub = null;

export function endBadge(options) {
  if (!options) return null;
  if (options.end === "score_66") return h("span.badge.end", {}, "기본 66점");
  const n = options.rounds || 3;
  return h("span.badge.end", {}, `빠른 판수 · ${n}판`);
}

/** A room request; refused (or unanswered), the room is drawn again as it
 * is: a refused 인원 left its list on the count refused, over the seats as
 * they were (rooms audit). */
async function send(frame, types = ["room"], said = null) {
  const f = await net.ask(frame, types, toast);
  if ((!f || f.type === "error") && location.hash.startsWith("#/room")) state.emit("room");
  // the host's own change said (a bot put in changed the list silently: a11y audit)
  if (f?.type === "room" && said) announce(`${said} ${seatsLeft(f.room)}`);
  return f;
}

function seatsLeft(room) {
  const empty = room.seats - (room.members || []).filter((m) => m.kind !== "empty").length;
  return empty > 0 ? `빈자리 ${empty}개예요.` : "자리가 다 찼어요.";
}

export function showRoom(root) {
  if (unsub) unsub();
  const render = () => {
    const room = state.room;
    if (!room) { location.hash = "#/"; return; }
    mount(root, roomView(room));
  };
  unsub = state.on("room", () => { if (location.hash.startsWith("#/room")) render(); });
  render();
}

function roomView(room) {
  const meta = GAMES[room.game];
  const isHost = room.host === state.player;
  const members = (room.members || []).filter((m) => m.kind !== "empty");
  const bySeat = new Map(members.map((m) => [m.seat, m]));
  const seats = [];
  for (let s = 0; s < room.seats; s++) {
    const m = bySeat.get(s);
    seats.push(h("li.seat", { class: m ? m.kind : "empty", dataset: { seat: s } },
      // read "1번 자리: 철수 방장 나", not "1 철수 방장 나" (a11y audit)
      h("span.seat-no", {}, `${s + 1}`, h("span.visually-hidden", {}, "번 자리:")),
      !m ? h("span.muted", {}, "빈자리")
        : m.kind === "bot" ? [h("span.name", {}, `봇 (${LEVELS[m.level] || m.level})`),
          isHost ? button("빼기", () => send({ type: "room_remove_bot", seat: s }, ["room"], `${s + 1}번 자리 봇을 뺐어요.`),
            { class: "small", "aria-label": `빼기: ${s + 1}번 자리 봇` }) : null]
          : [h("span.name", {}, m.nickname || "손님"),
            m.player === room.host ? h("span.badge", {}, "방장") : null,
            m.player === state.player ? h("span.badge.me", {}, "나") : null,
            // gone: the seat waits a minute for them (RULES.md 4; rooms audit)
            m.away ? h("span.badge.away", { title: "1분 안에 돌아오지 않으면 방에서 나가요" }, "연결 끊김") : null,
            typeof m.display === "number" ? h("span.muted.rating", {}, ` 레이팅 ${m.display.toLocaleString("ko-KR")}`) : null]));
  }
  const empty = room.seats - members.length;
  // a friend away when the game starts plays from the start on its clock,
  // and a bot takes their seat a minute later (RULES.md 4): the host is told
  // before pressing 시작 (nothing warned: rooms audit)
  const away = members.filter((m) => m.away).map((m) => m.nickname || "손님");
  const note = isHost ? startNote(room, members.length, empty, away) : null;
  return h("section.page.room", {},
    h("div.room-head", {},
      h("h1", {}, meta?.name || room.game),
      room.game === "penalty_rows" ? endBadge(room.options) : null,
      h("p.code", {}, "방 코드 ", h("strong#room-code", { "data-code": room.code }, room.code),
        button("복사", () => copyCode(document.getElementById("room-code"), room.code), { class: "small", dataset: { act: "copy" } }),
        // a link a friend opens to come straight in (#/join/CODE: main.js)
        button("초대 링크", () => copyLink(inviteLink(room.code)), { class: "small", dataset: { act: "invite" } }))),
    // bots are the host's to add: a guest is not told "혼자서도 봇을 넣어…" (trial nitpick)
    h("p.muted", {}, isHost ? "친구에게 방 코드를 알려 주세요. 혼자서도 봇을 넣어 바로 시작할 수 있어요 (봇마다 난이도를 골라요)."
      : "친구에게 방 코드를 알려 주면 같이 할 수 있어요. 봇은 방장이 넣어요."),
    h("ol.seats", {}, seats),
    isHost ? hostControls(room, empty) : h("p.muted", {}, "방장이 시작하기를 기다리고 있어요…"),
    optionsSummary(room, isHost),
    h("div.row.actions", {},
      button("방 나가기", () => send({ type: "room_leave" }, ["room_left"])),
      isHost ? button("시작", () => send({ type: "room_start" }, ["matched"]),
        { class: "primary", dataset: { act: "start" }, disabled: room.game !== "hakka" && members.length < 2,
          "aria-describedby": note ? "start-note" : null }) : null),
    note,
    h("a.rules-link", { href: `#/rules/${room.game}` }, `${meta?.name || ""} 규칙`),
  );
}

function inviteLink(code) {
  return `${location.origin}${location.pathname}#/join/${code}`;
}

/** The text to the clipboard, or the old way (a page with no clipboard):
 * whether it was copied. */
async function copied(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch { /* no clipboard here, or not allowed: the old way */ }
  const box = h("textarea", { readonly: true, style: { position: "fixed", opacity: "0", top: "0", left: "0" } }, text);
  document.body.append(box);
  box.select();
  let ok = false;
  try { ok = document.execCommand("copy"); } catch { /* as not copied */ }
  box.remove();
  return ok;
}

async function copyLink(link) {
  if (await copied(link)) toast("초대 링크를 복사했어요. 친구에게 보내면 바로 이 방에 들어와요.");
  else toast(`이 링크를 친구에게 보내 주세요: ${link}`, "info", 10_000);
}

/** 복사: the clipboard, else the code selected for the phone's own copy —
 * a page not on https or localhost (a LAN address) has no clipboard, and
 * the button did nothing (rooms audit). */
async function copyCode(el, code) {
  if (await copied(code)) { toast("복사했어요."); return; }
  const range = document.createRange(); // selected for the phone's own copy
  range.selectNodeContents(el);
  getSelection().removeAllRanges();
  getSelection().addRange(range);
  toast("코드를 선택해 두었어요. 길게 눌러 복사해 주세요.");
}

/** Who plays if the host starts now: empty seats are not dealt in (하카 카드
 * fills them with 보통 bots), so a 4-seat room with one bot is a game of two. */
function startNote(room, seated, empty, away = []) {
  const gone = away.length ? `${away.join(", ")}의 연결이 끊겨 있어요. 시작한 뒤 1분 안에 돌아오지 않으면 봇이 그 자리를 이어받아요.` : "";
  const text = [gone, seatsNote(room, seated, empty)].filter(Boolean).join(" ");
  return text ? h("p#start-note.muted.start-note", {}, text) : null;
}

function seatsNote(room, seated, empty) {
  if (empty <= 0) return "";
  if (room.game === "hakka") return `지금 시작하면 빈자리 ${empty}개는 봇(${LEVELS.normal})이 채워요.`;
  // why 시작 is off, in sight (it was the button's title: no hover on a
  // phone, and a screen reader skips a disabled button's title)
  if (seated < 2) return "2명부터 시작할 수 있어요. 봇을 넣거나 친구를 기다려 주세요.";
  return `지금 시작하면 빈자리 ${empty}개는 빼고 ${seated}명이 해요.`;
}

function hostControls(room, empty) {
  // the host's last choice (as quick match's), kept across the room's redraws
  const saved = store.lastBotLevel(room.game);
  const level = h("select", { "aria-label": "봇 난이도", name: "bot-level",
    onchange: () => store.rememberBotLevel(room.game, level.value) },
    Object.entries(LEVELS).map(([k, v]) => h("option", { value: k, selected: k === saved }, v)));
  return h("div.row.host", {},
    level,
    button("봇 넣기", () => send({ type: "room_add_bot", level: level.value }, ["room"],
      `${josa(`봇 (${LEVELS[level.value]})`, "을/를")} 넣었어요.`), { disabled: empty <= 0, dataset: { act: "add-bot" } }));
}

function optionsSummary(room, isHost) {
  const o = room.options || {};
  const set = (patch) => send({ type: "room_options", options: { ...o, ...patch } });
  const choice = (label, key, values, fmt) => h("label.opt", {}, label,
    h("select", { name: key, disabled: !isHost, onchange: (e) => set({ [key]: parse(e.target.value) }) },
      values.map((v) => h("option", { value: v, selected: o[key] === v }, fmt(v)))));
  const parse = (v) => (/^\d+$/.test(v) ? Number(v) : v);
  const items = [];
  const meta = GAMES[room.game];
  if (meta.seats.length > 1) {
    items.push(h("label.opt", {}, "인원",
      h("select", { name: "seats", disabled: !isHost,
        onchange: (e) => send({ type: "room_options", seats: Number(e.target.value) }, ["room"],
          `인원을 ${e.target.value}명으로 바꿨어요.`) },
      meta.seats.map((n) => h("option", { value: n, selected: room.seats === n }, `${n}명`)))));
  }
  if (room.game === "onecard") items.push(choice("제한 시간", "turn_ms", [30000, 45000], (v) => `${v / 1000}초`));
  if (room.game === "penalty_rows") {
    items.push(choice("고르는 시간", "select_ms", [20000, 30000, 45000], (v) => `${v / 1000}초`));
    items.push(choice("끝나는 방법", "end", ["rounds", "score_66"], (v) => (v === "rounds" ? "빠른 판수" : "기본 66점")));
    if (o.end !== "score_66") items.push(choice("판 수", "rounds", [1, 3, 5], (v) => `${v}판`));
  }
  // 관전 (issue 15): may others watch this table from the lobby's list
  items.push(h("label.opt.spectators", {}, h("input", { type: "checkbox", name: "spectators", disabled: !isHost,
    checked: o.spectators !== false, onchange: (e) => set({ spectators: e.target.checked }) }), " 관전 허용"));
  return h("fieldset.options", {}, h("legend", {}, isHost ? "방 설정" : "방 설정 (방장만 바꿀 수 있어요)"), items);
}
