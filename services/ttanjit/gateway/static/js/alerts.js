// "It is your turn" (issue 14): a short beep made with Web Audio (no sound
// file), a vibration where the phone allows it, and — while the tab is
// hidden — the tab title and a badge on the favicon. The sound can be
// muted; the choice is remembered (localStorage "ttanjit.sound").
const KEY = "ttanjit.sound";
const BASE_TITLE = document.title;
let audio = null;
let alerting = false;

export function soundOn() {
  try { return localStorage.getItem(KEY) !== "off"; } catch { return true; }
}

export function setSound(on) {
  try { localStorage.setItem(KEY, on ? "on" : "off"); } catch { /* private mode */ }
}

function beep() {
  if (!soundOn()) return;
  try {
    const Ctx = window.AudioContext || window.webkitAudioContext;
    if (!Ctx) return;
    audio = audio || new Ctx();
    if (audio.state === "suspended") audio.resume().catch(() => {});
    const t = audio.currentTime;
    for (const [i, freq] of [[0, 880], [1, 1320]]) { // two short notes
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.type = "sine";
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.0001, t + i * 0.16);
      gain.gain.exponentialRampToValueAtTime(0.25, t + i * 0.16 + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, t + i * 0.16 + 0.14);
      osc.connect(gain).connect(audio.destination);
      osc.start(t + i * 0.16);
      osc.stop(t + i * 0.16 + 0.15);
    }
  } catch { /* no audio on this device */ }
}

let screenBase = BASE_TITLE;
let badged = false;

/** The tab's title for a screen ("순위 — 딴짓"; null: the lobby's). */
export function screenTitle(name) {
  screenBase = name ? `${name} — 딴짓` : BASE_TITLE;
  if (!badged) document.title = screenBase;
}

function badge(on) {
  const link = document.getElementById("favicon");
  if (link) link.setAttribute("href", on ? "favicon-turn.svg" : "favicon.svg");
  badged = on;
  document.title = on ? "● 내 차례예요! — 딴짓" : screenBase;
  document.documentElement.dataset.turnAlert = on ? "on" : "off";
}

/** Sound and vibration need the page to have been tapped or clicked since
 * it loaded (browsers block both before that, and log it): a page opened or
 * reloaded on the player's own turn shows the turn without them. */
function touched() {
  const ua = navigator.userActivation;
  return ua ? ua.hasBeenActive : true; // no way to ask: try, as before
}

/** The game tells us whether it is this player's turn now. */
export function myTurn(on) {
  if (on && !alerting) {
    alerting = true;
    if (touched()) {
      beep();
      try { navigator.vibrate?.([120, 60, 120]); } catch { /* not allowed */ }
    }
    if (document.hidden) badge(true);
  } else if (!on && alerting) {
    alerting = false;
    badge(false);
  }
}

document.addEventListener("visibilitychange", () => {
  if (!document.hidden) badge(false);
  else if (alerting) badge(true);
});
