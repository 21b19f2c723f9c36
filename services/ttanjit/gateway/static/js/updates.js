// How a table takes an `update` frame (docs/websocket.md 3): the events
// of one game burst for this seat, then the seat's whole view after them.
// Pure (no DOM): the node unit tests check it (web/test).
//
// The client holds `held`, the game_seq of the view it shows (every update
// and every `view` sets both together). An update
// - older than that (a replayed one after the answer to a `sync`) is dropped
//   whole: its view is older than the one held;
// - ending at `held` with events is one already taken (replayed after a
//   resume): dropped whole too;
// - ending at `held` with no events carries a change of the seat's own view
//   only (e.g. 줄줄이 벌점 `select`): its view is taken;
// - else its events after `held` go to the table, in order, and its view is
//   taken. Its first event after `held + 1` is a gap (events were lost): the
//   view is still the whole truth, but the controller asks for a `sync`.

/**
 * @param {number} held the game_seq of the view held (0: none yet)
 * @param {object} f the update frame: {game_seq, events: [{game_seq, t, event}], view}
 *   or, with no events, {game_seq, events: [], patch} (fields of the seat's view)
 * @param {boolean} haveView whether a view is held at all (without one
 *   there is nothing to be behind of: no gap)
 * @returns {{events: object[], takeView: boolean, gap: boolean, seq: number}}
 */
export function planUpdate(held, f, haveView = true) {
  const all = Array.isArray(f?.events) ? f.events : [];
  const last = typeof f?.game_seq === "number" ? f.game_seq : null;
  if (last !== null && (last < held || (last === held && all.length > 0 && haveView))) {
    return { events: [], takeView: false, gap: false, seq: held };
  }
  const events = all.filter((e) => typeof e?.game_seq !== "number" || e.game_seq > held);
  const first = all.length && typeof all[0]?.game_seq === "number" ? all[0].game_seq : null;
  const gap = haveView && first !== null && first > held + 1;
  // `patch` (no events: the seat's own move changed only its own hidden
  // fields) replaces those fields of the view held; without a view held
  // there is nothing to patch
  const takeView = !!f?.view || (!!f?.patch && haveView && !all.length);
  return { events, takeView, gap, seq: last === null ? held : Math.max(held, last) };
}
