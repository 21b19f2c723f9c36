// The WebSocket session (docs/websocket.md): hello / resume, frame seq
// bookkeeping, ping/pong clock sync, reconnect with backoff, and game
// actions that survive a dropped connection (same cmd_id resent; the shard
// deduplicates it).
import * as clock from "./clock.js";
import * as store from "./store.js";
import { ensureToken } from "./identity.js";

const PING_MS = 10_000;
// a ping unanswered this long (nor any other frame) means the connection is
// gone though the socket says open: a phone off its network keeps it "open"
// and the page said 연결됨 over a frozen table (trial finding)
const PONG_WAIT_MS = 5_000;
// a game action unanswered this long has the connection checked at once (a
// ping), not at the next one of every 10 s: a phone off its network keeps
// the socket "open", and a move pressed then waited up to 15 s, unsaid
// (review finding)
const ANSWER_WAIT_MS = 1_500;
// a game action unanswered this long is said to be on its way (on a slow
// network a move showed nothing for 3 s, and a second press of it was
// refused "차례가 이미 끝나서": network audit)
export const SLOW_ANSWER_MS = 800;
// a connection that has not said welcome this long after it was opened is
// tried again: a handshake into a network that swallows it (a dead zone, a
// half-open NAT, a captive Wi-Fi) left the page 다시 연결 중… for good, and a
// bot took the seat while the network was back (network audit)
const HANDSHAKE_MS = 10_000;
/** A reconnect's wait: half the backoff and up to as much again at random,
 * so the players a gateway dropped at once do not all come back at once
 * (1,833 of 2,000 came at exactly +0.5 s: overload audit). */
export function spread(backoff, random = Math.random) {
  return Math.round(backoff / 2 + random() * (backoff / 2));
}
/** A full gateway's refusal (close 1013, `server_full`: a reconnect herd,
 * too few gateways): the first try again after 2.5–5 s, each next one
 * twice as long, up to 15–30 s, so the refused do not come back as a
 * herd of their own (docs/websocket.md 5). */
const BUSY_MS = 5_000;
const BUSY_MAX_MS = 30_000;
export const REPLACED_MESSAGE = "다른 창이나 기기에서 하고 있어요. 위의 '이 창에서 계속하기'를 누르면 여기서 이어서 해요.";

export class Session extends EventTarget {
  constructor() {
    super();
    this.ws = null;
    this.state = "idle"; // idle | connecting | open | closed | replaced
    this.lastSeq = store.get("last_seq", 0);
    this.session = store.get("session", null);
    this.pending = new Map(); // cmd_id -> {frame, resolve}
    this.waiters = []; // {type, resolve, reject, timer}
    this.backoff = 500;
    this.busy = 0; // the wait while gateways refuse us as full (1013), 0 when not
    this.leaving = false; // this tab is signing out (records.js): its close is no loss
    this.pingTimer = null;
    this.pingMs = PING_MS;
    this.pongWaitMs = PONG_WAIT_MS;
    this.lastHeard = 0; // when the last frame came (Date.now())
    this.deadTimer = null;
    this.cmdCounter = 0;
    this.welcome = null;
    // moves this tab sent and saw no answer to before a reload: sent again
    // once connected (same cmd_id: the shard deduplicates), their answer
    // an event ("restored"); a move pressed offline was lost, unsaid, when
    // the tab was reloaded (network audit)
    for (const frame of store.get("pending", null) || []) {
      if (frame && typeof frame.cmd_id === "string") {
        this.pending.set(frame.cmd_id, { frame, at: Date.now(), notAgain: null,
          resolve: (f) => this.emit("restored", { ...f, sent: frame }) });
      }
    }
    // the device says it lost or found its network: act at once
    window.addEventListener("offline", () => this.lost());
    window.addEventListener("online", () => {
      this.backoff = 500;
      // a try under way when the network went is dropped for a new one
      if (this.state === "connecting" && this.ws) this.lost();
      else if (this.state === "closed") this.connect();
    });
  }

  get token() { return store.get("token", null); }

  connect() {
    if (!this.token && !store.get("refresh", null)) return;
    if (this.ws && (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING)) return;
    if (this.refreshing) return;
    // the access token is short-lived: a fresh one from the lasting credential first (identity.js)
    this.refreshing = true;
    ensureToken().then((tok) => {
      this.refreshing = false;
      if (!tok) { this.setState("closed"); this.emit("signed_out", {}); return; }
      this.open();
    });
  }

  open() {
    if (this.ws && (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING)) return;
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(`${proto}//${location.host}/ws`);
    this.ws = ws;
    this.setState("connecting");
    clearTimeout(this.handshakeTimer);
    // longer at each try in a row (10, 20, 30 s): a network that takes more
    // than 10 s to say welcome still gets there (review finding)
    const wait = (this.handshakeMs || HANDSHAKE_MS) * Math.min(3, 1 + (this.handshakeTries || 0));
    this.handshakeTimer = setTimeout(() => {
      if (this.ws !== ws || this.state !== "connecting") return;
      this.handshakeTries = (this.handshakeTries || 0) + 1;
      this.lost();
    }, wait);
    ws.onopen = () => {
      const hello = { type: "hello", token: this.token };
      if (this.session) hello.resume = { session: this.session, last_seq: this.lastSeq };
      ws.send(JSON.stringify(hello));
    };
    ws.onmessage = (msg) => this.onFrame(msg.data);
    ws.onclose = (ev) => this.onClose(ev);
    ws.onerror = () => {};
  }

  /** Drop the connection as a network failure would (a rename's new token, tests). */
  drop() { this.lost(); }

  setState(s) {
    this.state = s;
    this.emit("net", { state: s });
  }

  /** The connection is gone though the socket may not know yet: drop it
   * without waiting for a closing handshake that cannot come, and reconnect. */
  lost() {
    const ws = this.ws;
    if (!ws || this.state === "replaced") return;
    ws.onclose = null;
    ws.onmessage = null;
    try { ws.close(4000, "connection lost"); } catch { /* closing already */ }
    this.onClose({ code: 4000 });
  }

  onClose(ev) {
    clearTimeout(this.handshakeTimer);
    clearInterval(this.pingTimer);
    clearTimeout(this.deadTimer);
    this.deadTimer = null;
    this.ws = null;
    if (ev.code === 4001) { // another tab took over this player
      this.setState("replaced");
      return;
    }
    if (ev.code === 1008) { // bad token: sign in again
      store.clearAuth();
      this.setState("closed");
      this.emit("signed_out", {});
      return;
    }
    // 4004: the sign-in's refresh family was removed — this tab's own
    // 로그아웃 (under way: nothing to do), another tab's (followed when it
    // clears the player: main.js's storage listener, which says 로그아웃),
    // or a stolen copy used. The next hello finds out (bad_token, then a
    // refresh refused: signed out, said as refused); signed out at once, a
    // tab showed the sign-in before the other tab's 로그아웃 was said
    // (CI finding)
    if (ev.code === 4004 && this.leaving) {
      this.setState("closed");
      return;
    }
    let wait;
    if (ev.code === 1013) { // the gateway is full: said in the top bar, tried again later
      this.busy = Math.min(this.busy ? this.busy * 2 : BUSY_MS, BUSY_MAX_MS);
      wait = spread(this.busy);
    } else {
      this.busy = 0;
      wait = spread(this.backoff);
      this.backoff = Math.min(this.backoff * 2, 5000);
    }
    this.setState("closed");
    setTimeout(() => this.connect(), wait);
  }

  onFrame(data) {
    this.lastHeard = Date.now();
    let f;
    try { f = JSON.parse(data); } catch { return; }
    if (f.server_ms) clock.hint(f.server_ms);
    if (f.type === "error" && f.code === "bad_token" && f.ref === "hello") {
      // expired meanwhile: a new token from the refresh credential, then hello again
      ensureToken(true).then((tok) => {
        if (tok && this.ws) this.ws.send(JSON.stringify({ type: "hello", token: tok, ...(this.session ? { resume: { session: this.session, last_seq: this.lastSeq } } : {}) }));
        else if (!tok) { store.clearAuth(); this.emit("signed_out", {}); }
      });
      return;
    }
    if (f.type === "welcome") {
      this.welcome = f;
      this.session = f.session;
      store.set("session", f.session);
      this.backoff = 500;
      this.busy = 0;
      clearTimeout(this.handshakeTimer);
      this.handshakeTries = 0;
      this.setState("open");
      this.startPings();
      // answered actions are forgotten; the rest go again with the same
      // cmd_id — but one whose moment has passed by now (원카드!: its
      // window is 3 s, and pressed in a silent drop it came back after the
      // reconnect as a false call, one card drawn: network audit)
      for (const [cmd_id, p] of [...this.pending]) {
        if (p.notAgain) {
          this.pending.delete(cmd_id);
          p.resolve({ type: "error", code: "not_sent", cmd_id, message: p.notAgain });
        } else this.raw(p.frame);
      }
      this.pendingChanged();
    }
    // (a frame of no session — a full gateway's refusal, an error before
    // hello — says seq 0: the session's last seq stays, for the resume to
    // be gapless; it was a resync after every refusal: review finding)
    if (typeof f.seq === "number" && f.seq > 0) {
      this.lastSeq = f.seq;
      store.set("last_seq", f.seq);
    }
    if (f.type === "pong" && typeof f.client_ms === "number") {
      clock.addSample(f.client_ms, f.server_ms);
    }
    if ((f.type === "result" || f.type === "error") && f.cmd_id && this.pending.has(f.cmd_id)) {
      const p = this.pending.get(f.cmd_id);
      this.pending.delete(f.cmd_id);
      p.resolve(f);
      this.pendingChanged();
    }
    for (const w of [...this.waiters]) {
      if (w.types.includes(f.type) || (f.type === "error" && w.ref && f.ref === w.ref)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        clearTimeout(w.timer);
        w.resolve(f);
      }
    }
    this.emit("frame", f);
    this.emit(f.type, f);
  }

  startPings() {
    clearInterval(this.pingTimer);
    clearTimeout(this.deadTimer);
    this.deadTimer = null;
    const ping = () => this.ping();
    ping();
    setTimeout(ping, 300);
    setTimeout(ping, 1200);
    this.pingTimer = setInterval(ping, this.pingMs);
  }

  /** A ping; nothing heard for `pongWaitMs` after it (no pong, nor any
   * other frame) and the connection is lost. One awaited at a time, unless
   * the awaited one was answered already: then this one is (a move's check
   * skipped so waited for the next ping). The gateway answers a ping at
   * once, beside a lobby request the matchmaker is slow to answer. */
  ping() {
    const sent = Date.now();
    if (!this.raw({ type: "ping", client_ms: sent })) return;
    if (this.deadTimer && this.lastHeard < this.deadSent) return;
    clearTimeout(this.deadTimer);
    this.deadSent = sent;
    this.deadTimer = setTimeout(() => {
      this.deadTimer = null;
      if (this.lastHeard < sent) this.lost();
    }, this.pongWaitMs);
  }

  raw(frame) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify(frame));
      return true;
    }
    return false;
  }

  /** Send a lobby frame and wait for one of `types` (or an error about it). */
  request(frame, types, timeoutMs = 10_000) {
    // another tab holds the player: refused at once, as action() is (a press
    // here waited 10 s for a timeout, then went once the tab took over again)
    if (this.state === "replaced") return Promise.resolve(this.replacedError());
    return new Promise((resolve, reject) => {
      const w = { types, ref: frame.type, resolve, reject, timer: null };
      let again = null;
      w.timer = setTimeout(() => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) this.waiters.splice(i, 1);
        if (again) this.removeEventListener("welcome", again); // not sent: not later either
        reject(new Error("timeout"));
      }, timeoutMs);
      this.waiters.push(w);
      if (!this.raw(frame)) {
        // not connected: try once the session is back
        again = () => { this.removeEventListener("welcome", again); this.raw(frame); };
        this.addEventListener("welcome", again);
      }
    });
  }

  send(frame) { return this.raw(frame); }

  replacedError() { return { type: "error", code: "replaced", message: REPLACED_MESSAGE }; }

  /** request() for the lobby screens: errors and silence become a toast. */
  async ask(frame, types, toast) {
    try {
      const f = await this.request(frame, types);
      if (f.type === "error") toast(f.message || f.code, "error");
      return f;
    } catch {
      toast("서버가 응답하지 않아요. 잠시 후 다시 해 주세요.", "error");
      return null;
    }
  }

  /** The unanswered moves changed: into this tab's storage (the
   * constructor reads them), and said ("pending"). */
  pendingChanged() {
    store.set("pending", this.resendable().map((p) => p.frame));
    this.emit("pending", {});
  }

  /** The unanswered moves sent again once connected (not a 원카드!, which
   * is not: "보낼 수 1개" over a 원카드! then said "보내지 않았어요"; browser
   * check). */
  resendable() {
    return [...this.pending.values()].filter((p) => !p.notAgain);
  }

  /** How many moves wait to be sent again once connected. */
  held() {
    return this.resendable().length;
  }

  /** Whether an action has waited for its answer at least SLOW_ANSWER_MS. */
  sending() {
    const now = Date.now();
    return [...this.pending.values()].some((p) => now - p.at >= SLOW_ANSWER_MS);
  }

  /** A game action; resolves with the `result` or `error` frame.
   * `notAgain`: not sent again after a reconnect; resolved then with an
   * error frame of code `not_sent` and this message. */
  action(gameId, action, notAgain = null) {
    // another tab holds the player: nothing is sent, nor kept to send when
    // this tab takes the player back (a key press queued a move: trial finding)
    if (this.state === "replaced") return Promise.resolve(this.replacedError());
    this.cmdCounter += 1;
    const cmd_id = `c${Date.now().toString(36)}${this.cmdCounter}`;
    const frame = { type: "action", game_id: gameId, cmd_id, action };
    return new Promise((resolve) => {
      this.pending.set(cmd_id, { frame, resolve, at: Date.now(), notAgain });
      this.pendingChanged();
      this.raw(frame);
      setTimeout(() => { if (this.pending.has(cmd_id)) this.emit("pending", {}); }, SLOW_ANSWER_MS);
      setTimeout(() => { if (this.pending.has(cmd_id) && this.state === "open") this.ping(); }, ANSWER_WAIT_MS);
    });
  }

  emit(type, detail) { this.dispatchEvent(new CustomEvent(type, { detail })); }
  on(type, fn) {
    const l = (e) => fn(e.detail);
    this.addEventListener(type, l);
    return () => this.removeEventListener(type, l);
  }
}

export const net = new Session();
