// Small DOM helpers shared by every screen. No framework: each screen builds
// its nodes with h() and replaces the content of #app.

export function h(tag, attrs = {}, ...children) {
  // "tag#id.class1.class2"
  const m = /^([a-z0-9]*)(?:#([\w-]+))?((?:\.[\w-]+)*)$/i.exec(tag);
  const [, name, id, cls] = m || [null, tag, null, ""];
  const el = document.createElement(name || "div");
  if (id) el.id = id;
  if (cls) el.className = cls.slice(1).split(".").join(" ");
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className += (el.className ? " " : "") + v;
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "style" && typeof v === "object") Object.assign(el.style, v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

const FOCUSABLE = 'button:not([disabled]), a[href], select:not([disabled]), input:not([disabled]), textarea, [tabindex]:not([tabindex="-1"])';

/** What identifies a control across a redraw: its tag, data-* and name
 * (its text too when it has neither). */
function signature(el) {
  const data = JSON.stringify({ ...el.dataset });
  const name = el.getAttribute("name") || "";
  return { tag: el.tagName, data, name, text: data === "{}" && !name ? el.textContent.trim() : null };
}

function sameControl(el, sig) {
  if (el.tagName !== sig.tag || JSON.stringify({ ...el.dataset }) !== sig.data) return false;
  if ((el.getAttribute("name") || "") !== sig.name) return false;
  return sig.text === null || el.textContent.trim() === sig.text;
}

/** Where the keyboard focus was inside ``root``, to find it again after a redraw. */
function focusMark(root) {
  const el = document.activeElement;
  if (!el || el === document.body || el === root || !root.contains(el)) return null;
  const box = el.parentElement?.closest("[class]") || root;
  const peers = [...box.querySelectorAll(FOCUSABLE)];
  // a text box's caret too: its look-alike took the focus with the caret
  // at the start, and what was typed next went before the rest (IME audit:
  // 김 + 철수 became 철수김)
  const caret = typeof el.selectionStart === "number" ? [el.value, el.selectionStart, el.selectionEnd] : null;
  return { sig: signature(el), box: box === root ? null : { tag: box.tagName, cls: box.className },
    at: Math.max(0, peers.indexOf(el)), caret };
}

function refocus(root, mark) {
  if (!mark || (document.activeElement && document.activeElement !== document.body && root.contains(document.activeElement))) return;
  let el = [...root.querySelectorAll(mark.sig.tag)].find((e) => sameControl(e, mark.sig) && e.matches(FOCUSABLE));
  if (!el && /^H[1-6]$/.test(mark.sig.tag)) { // a heading given the focus (a new screen's, a result's)
    el = [...root.querySelectorAll(mark.sig.tag)].find((e) => sameControl(e, mark.sig));
    if (el) el.tabIndex = -1;
  }
  if (!el && mark.box) {
    // gone (the card just played, a button of a turn that is over): its neighbour in the same place
    const box = [...root.getElementsByTagName(mark.box.tag)].find((e) => e.className === mark.box.cls);
    const peers = box ? [...box.querySelectorAll(FOCUSABLE)] : [];
    el = peers[Math.min(mark.at, peers.length - 1)];
  }
  el?.focus({ preventScroll: true });
  if (el && mark.caret && el.value === mark.caret[0] && typeof el.setSelectionRange === "function") {
    try { el.setSelectionRange(mark.caret[1], mark.caret[2]); } catch { /* a box of a type without a caret */ }
  }
  // else the hand; a hand with nothing to press (줄줄이 벌점's after 확정)
  // leaves it on the line that says what now (data-focus-rest): it fell to
  // the page, and each turn began there (a11y audit)
  if (!el && !focusHome(root)) {
    const rest = root.querySelector("[data-focus-rest]");
    if (rest) { rest.tabIndex = -1; rest.focus({ preventScroll: true }); }
  }
}

/** Focus the first control of ``root``'s ``[data-focus-home]`` (a table's
 * hand): where the keyboard goes when the control it was on is gone. */
export function focusHome(root = document) {
  const home = root.querySelector("[data-focus-home]");
  const el = home && [...home.querySelectorAll(FOCUSABLE)][0];
  el?.focus({ preventScroll: true });
  return Boolean(el);
}

/** A hand (``[data-focus-home]``) is one Tab stop: the card with the
 * focus, else its first; the arrow keys, Home and End move between its
 * cards (a keyboard trial: a card played took 8–30 Tabs, past every card of
 * the hand to [카드 내기] and back). */
let lastStop = null; // the card the hand's Tab stop was on (data-card), across redraws

function rove(root) {
  for (const group of root.querySelectorAll("[data-focus-home]")) {
    const cards = [...group.querySelectorAll("button")];
    // (a redraw with the focus on [카드 내기]: Shift+Tab goes back to the
    // card it left, not to the first: review finding)
    const at = cards.includes(document.activeElement) ? document.activeElement
      : cards.find((c) => !c.disabled && c.dataset.card === lastStop) || cards.find((c) => !c.disabled);
    for (const c of cards) c.tabIndex = c === at ? 0 : -1;
  }
}

const ROVE_KEYS = new Set(["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End"]);
// (in a page: the pure modules' unit tests load this one in Node)
globalThis.document?.addEventListener("focusin", (e) => {
  const group = e.target instanceof Element && e.target.tagName === "BUTTON" && e.target.closest("[data-focus-home]");
  if (!group) return;
  lastStop = e.target.dataset.card ?? null;
  for (const c of group.querySelectorAll("button")) c.tabIndex = c === e.target ? 0 : -1;
});
globalThis.document?.addEventListener("keydown", (e) => {
  if (!ROVE_KEYS.has(e.key) || e.altKey || e.ctrlKey || e.metaKey || !(e.target instanceof Element)) return;
  const group = e.target.closest("[data-focus-home]");
  const cards = group ? [...group.querySelectorAll("button:not([disabled])")] : [];
  const i = cards.indexOf(e.target);
  if (i < 0) return;
  const n = cards.length;
  const back = e.key === "ArrowLeft" || e.key === "ArrowUp";
  const j = e.key === "Home" ? 0 : e.key === "End" ? n - 1 : (i + (back ? n - 1 : 1)) % n;
  e.preventDefault(); // not a scroll of the page
  for (const c of group.querySelectorAll("button")) c.tabIndex = c === cards[j] ? 0 : -1;
  cards[j].focus();
});

/** Replace what ``root`` shows. A keyboard user's focus stays on the same
 * control (or its neighbour) across the redraw: every server update redraws
 * a table, and the focus went back to the page's top (a11y trial). */
export function mount(root, ...children) {
  // another screen: its heading takes the focus, not a look-alike of the old screen's control
  const mark = headingDue && root.id === "app" ? null : focusMark(root);
  root.replaceChildren();
  append(root, children);
  refocus(root, mark);
  rove(root);
  // (a 관전 or 다시 보기 screen draws its table into a box of its own, later)
  if (headingDue && (root.id === "app" || root.closest?.("#app"))) focusHeading(app());
  return root;
}

let headingDue = false;

/** The router opened another screen: its heading takes the focus once it
 * is drawn (a screen change was silent, the focus left on the page: a11y
 * trial), unless the player has focused something on it meanwhile. */
export function newScreen() {
  headingDue = true;
  // what was said for the last screen is not left in the live regions (a
  // game's "내가 한 장 남았어요! …" stayed there on 내 기록 and in the next
  // game, for a reader browsing the page: 원카드 audit)
  for (const id of ["announce", "announce-now"]) {
    const box = document.getElementById(id);
    if (box) box.textContent = "";
  }
}

function focusHeading(root) {
  const h1 = root.querySelector("h1");
  if (!h1) return; // still loading: the next draw
  headingDue = false;
  const at = document.activeElement;
  if (at && at !== document.body && root.contains(at)) return;
  h1.tabIndex = -1;
  h1.focus({ preventScroll: true });
}

/** ``fn`` (a request) one call at a time: a call while one is under way
 * resolves to undefined at once and sends nothing (a second tap on a slow
 * network made a second guest account, rename, code: IME/touch audit). */
export function oneAtATime(fn) {
  let busy = false;
  return async (...args) => {
    if (busy) return undefined;
    busy = true;
    try { return await fn(...args); } finally { busy = false; }
  };
}

/** Say ``text`` to a screen reader once, through the page's one live
 * region (index.html #announce): the screens redraw too often to be live
 * regions themselves. ``urgent`` interrupts (assertive). */
export function announce(text, urgent = false) {
  const box = document.getElementById(urgent ? "announce-now" : "announce");
  if (!box || !text) return;
  box.textContent = "";
  setTimeout(() => { box.textContent = text; }, 30); // the same words again are said again
}

export const app = () => document.getElementById("app");

/** A toast: `kind` info, error, warn…, and `keep` beside it for one that
 * outlives the screen change under way (main.js route drops the others). */
export function toast(text, kind = "info", ms = 3500) {
  const box = document.getElementById("toasts");
  // the same words again replace the ones shown (four "반응은 잠시 후에 다시
  // 보낼 수 있어요." covered a third of the table: trial finding)
  for (const old of box.querySelectorAll(".toast")) {
    if (old.textContent === String(text)) old.remove();
  }
  const el = h("div.toast", { class: kind, role: kind.split(" ")[0] === "error" ? "alert" : "status" }, text);
  box.append(el);
  setTimeout(() => el.remove(), ms);
  return el;
}

export function button(label, onclick, attrs = {}) {
  return h("button", { type: "button", onclick, ...attrs }, label);
}
