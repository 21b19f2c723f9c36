// Animation pacing. Players see every step; a test may speed it up with
// localStorage "ttanjit.anim" = "fast" (read at every step), and the OS
// "reduce motion" setting shortens it too.
const reduced = window.matchMedia?.("(prefers-reduced-motion: reduce)").matches;

function factor() {
  let f = reduced ? 0.5 : 1;
  try {
    if (localStorage.getItem("ttanjit.anim") === "fast") f = Math.min(f, 0.2);
  } catch { /* private mode */ }
  return f;
}

export const animMs = (ms) => Math.round(ms * factor());
