// Server time (DESIGN.md 3.3): every ping/pong carries the server's clock.
// offset = server_ms - local time at the middle of the round trip; the sample
// with the smallest round trip wins. Deadlines travel as server time, so the
// countdowns are right whatever the device clock says.

import { announce } from "./ui.js";

let offset = 0;
let bestRtt = Infinity;
let samples = 0;

export function addSample(sentLocal, serverMs, recvLocal = Date.now()) {
  const rtt = Math.max(0, recvLocal - sentLocal);
  // old best samples age out slowly, so a drifting clock is followed
  bestRtt = Math.min(bestRtt * 1.05 + 1, Infinity);
  if (rtt <= bestRtt || samples < 2) {
    bestRtt = rtt;
    offset = serverMs - (sentLocal + rtt / 2);
  }
  samples += 1;
}

/** A frame that carries server_ms without a round trip: only a first guess. */
export function hint(serverMs) {
  if (samples === 0 && typeof serverMs === "number") {
    offset = serverMs - Date.now();
  }
}

export const serverNow = () => Date.now() + offset;

// A player's own countdown (data-warn) is said as it nears its end, at 10
// and 5 seconds (once each per deadline, whatever redraws it): its numbers
// are not read out (every second they would drown the table), and a screen
// reader heard nothing before "시간이 지나 …" — three of those put the
// seat on 자동 진행 (a11y audit). Red under 5 s is for the eyes.
const WARN_AT = [10, 5];
let warnedFor = null; // the deadline last warned of
let warnedAt = Infinity; // and the lowest mark said for it

function warn(el, secs) {
  if (el.dataset.deadline !== warnedFor) {
    warnedFor = el.dataset.deadline;
    warnedAt = Infinity;
  }
  const due = WARN_AT.filter((w) => secs <= w && w < warnedAt);
  if (!due.length || secs <= 0) return;
  warnedAt = Math.min(...due);
  announce(`${secs}초 남았어요.`, warnedAt <= 5);
}

// One ticker for every countdown on the page: elements with data-deadline
// (server ms) show whole seconds left; data-total (ms) drives a bar.
function tick() {
  const now = serverNow();
  for (const el of document.querySelectorAll("[data-deadline]")) {
    const left = Number(el.dataset.deadline) - now;
    const secs = Math.max(0, Math.ceil(left / 1000));
    if (el.dataset.warn && document.body.dataset.net !== "replaced") warn(el, secs);
    const text = el.querySelector(".secs") || el;
    if (text.textContent !== String(secs)) text.textContent = String(secs);
    el.classList.toggle("urgent", left < 5000);
    const bar = el.querySelector(".bar > i");
    if (bar && el.dataset.total) {
      const frac = Math.max(0, Math.min(1, left / Number(el.dataset.total)));
      bar.style.width = `${(frac * 100).toFixed(1)}%`;
    }
  }
}
setInterval(tick, 200);
export const refreshTimers = tick;
