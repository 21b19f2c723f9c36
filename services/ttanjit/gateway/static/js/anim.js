// Animation pacing. Players see every step; a test may speed it up with
// localStorage "ttanjit.anim" = "fast" (read at every step), and the OS
// "reduce motion" setting shortens it too.
const reduced = globalThis.matchMedia?.("(prefers-reduced-motion: reduce)").matches;

function factor() {
  let f = reduced ? 0.5 : 1;
  try {
    if (localStorage.getItem("ttanjit.anim") === "fast") f = Math.min(f, 0.2);
  } catch { /* private mode */ }
  return f;
}

export const animMs = (ms) => Math.round(ms * factor());

// 줄줄이 벌점 places a turn's picks one by one, 450 ms each — the whole
// within REVEAL_MS: the next turn's one deadline runs meanwhile (RULES.md
// 2.5), and nothing can be picked until the last card is placed (at ten
// seats 4.5 s of its 20 went to watching: trial finding).
const PLACE_MS = 450;
const PLACE_MIN_MS = 200;
export const REVEAL_MS = 2400;

/** How long one placement of a reveal of `picks` cards shows. */
export function placeMs(picks) {
  const step = Math.max(PLACE_MIN_MS, Math.min(PLACE_MS, Math.floor(REVEAL_MS / Math.max(1, picks))));
  return animMs(step);
}
