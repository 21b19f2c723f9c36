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

export function mount(root, ...children) {
  root.replaceChildren();
  append(root, children);
  return root;
}

export const app = () => document.getElementById("app");

export function toast(text, kind = "info", ms = 3500) {
  const box = document.getElementById("toasts");
  // the same words again replace the ones shown (four "반응은 잠시 후에 다시
  // 보낼 수 있어요." covered a third of the table: trial finding)
  for (const old of box.querySelectorAll(".toast")) {
    if (old.textContent === String(text)) old.remove();
  }
  const el = h("div.toast", { class: kind, role: kind === "error" ? "alert" : "status" }, text);
  box.append(el);
  setTimeout(() => el.remove(), ms);
  return el;
}

export function button(label, onclick, attrs = {}) {
  return h("button", { type: "button", onclick, ...attrs }, label);
}
