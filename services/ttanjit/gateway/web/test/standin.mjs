// A minimal stand-in for the browser, for the client's modules in node
// (imported before them: no DOM is drawn here). Storage as the browser's;
// timers of setInterval do not hold node open.
class Storage {
  constructor() { this.m = new Map(); }
  getItem(k) { return this.m.has(k) ? this.m.get(k) : null; }
  setItem(k, v) { this.m.set(k, String(v)); }
  removeItem(k) { this.m.delete(k); }
  get length() { return this.m.size; }
  key(i) { return [...this.m.keys()][i] ?? null; }
}
export const noop = () => {};
globalThis.localStorage = new Storage();
globalThis.sessionStorage = new Storage();
globalThis.location = { hash: "#/", protocol: "http:", host: "localhost" };
globalThis.document = { title: "딴짓", hidden: false, addEventListener: noop, getElementById: () => null,
  querySelector: () => null, querySelectorAll: () => [] };
globalThis.window = { addEventListener: noop, matchMedia: () => ({ matches: false }) };
const realSetInterval = setInterval;
globalThis.setInterval = (f, ms) => { const t = realSetInterval(f, ms); t.unref?.(); return t; };
