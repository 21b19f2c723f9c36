// Animation pacing. Players see every step; a test may speed it up with
// localStorage "ttanjit.anim" = "fast" (and the OS "reduce motion" setting
// shortens it too).
let factor = 1;
try {
  if (localStorage.getItem("ttanjit.anim") === "fast") factor = 0.2;
} catch { /* ignore */ }
if (window.matchMedia?.("(prefers-reduced-motion: reduce)").matches) factor = Math.min(factor, 0.5);

export const animMs = (ms) => Math.round(ms * factor);
export const sleep = (ms) => new Promise((r) => setTimeout(r, animMs(ms)));
