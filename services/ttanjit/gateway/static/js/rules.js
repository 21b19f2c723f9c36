// The rules page of each game: the seed's text, kept verbatim in rules/*.txt
// (Hakka's cleaned up, with RULES.md 3's decisions; One Card's with the
// attack table its text names and lacks, from RULES.md 1.5), laid out as
// headings, paragraphs and lists.
import { h, mount, button } from "./ui.js";
import { GAMES, state } from "./state.js";

const BACK_TO = { game: "← 게임으로", watch: "← 관전으로", replay: "← 다시 보기로" };

/** `from`: the table, game watched or replay the rules were opened from
 * (main.js): the way back leads there. */
export async function showRules(root, gameName, from = null) {
  const meta = GAMES[gameName];
  if (!meta) {
    mount(root, h("p", {}, "없는 게임이에요."));
    return;
  }
  const tabs = h("nav.tabs", {}, Object.entries(GAMES).map(([g, m]) =>
    h("a", { href: `#/rules/${g}`, class: g === gameName ? "active" : "", "aria-current": g === gameName ? "page" : null }, m.name)));
  const body = h("article.rules", { lang: "ko" }, h("p.loading", {}, "불러오는 중…"));
  mount(root, h("section.page", {}, h("h1.visually-hidden", {}, `${meta.name} 규칙`), tabs, body,
    // where it says: going back in the history left the app when the rules
    // page was opened from elsewhere (trial finding); a player waiting in a
    // room goes back to it (the lobby shows no room: review)
    h("p", {}, from ? button(BACK_TO[from.split("/")[1]], () => { location.hash = from; })
      : state.room ? button("← 방으로", () => { location.hash = "#/room"; })
        : button("← 로비로", () => { location.hash = "#/"; }))));
  const res = await fetch(`rules/${gameName}.txt`);
  const text = await res.text();
  mount(body, ...renderRules(text));
}

/** The seed pages were copied from the service's web page: list numbers
 * and table cells ran into the text ("1. 1맨 위…", "• 551장벌점 7"), and
 * the 줄줄이 벌점 example's rows lost their cards (pictures on the page; the
 * steps under them name the cards, and the rows show those). The files stay
 * verbatim; the page shows them tidied. */
const EXAMPLE_ROWS = { "1번 줄": "…·12", "2번 줄": "25·29·31·34", "3번 줄": "46" };
export function tidy(line) {
  return line
    .replace(/^(\d+)\.\s*\1(?:\.\s*|(?=\D)|(?=\d))/, "$1. ")
    .replace(/^• 55(1장)(벌점 7)$/, "• 55 — $1 · $2")
    .replace(/^• (.*\D)(\d+장)(벌점 \d+)$/, "• $1 — $2 · $3")
    .replace(/^• (\d+번 줄)(\d+장 · 벌점 \d+)$/, (_, row, size) =>
      `• ${row} — ${EXAMPLE_ROWS[row] ? `${EXAMPLE_ROWS[row]} (${size})` : size}`);
}

/** The page's blocks: the title, headings, paragraphs, and lists of
 * bullets ("• ") or numbered steps ("1. "). A line that only starts with a
 * number is text ("7이나 조커로…", "2~10명이…", "36을 낸 사람이…" were
 * list items); bullets and steps side by side are two lists. */
export function rulesBlocks(text) {
  const lines = text.split("\n").map((l) => tidy(l.trim())).filter(Boolean);
  const out = [];
  let list = null;
  lines.forEach((line, i) => {
    const kind = line.startsWith("• ") ? "ul" : /^\d+\. /.test(line) ? "ol" : null;
    if (i > 0 && kind) {
      if (list?.tag !== kind) { list = { tag: kind, items: [] }; out.push(list); }
      list.items.push(kind === "ul" ? line.slice(2) : line);  // the step keeps its number
      return;
    }
    list = null;
    out.push({ tag: i === 0 ? "h2" : line.length <= 20 && !/[.요다]$/.test(line) ? "h3" : "p", text: line });
  });
  return out;
}

export function renderRules(text) {
  return rulesBlocks(text).map((b) => b.items
    ? h(b.tag, {}, b.items.map((item) => h("li", {}, item)))
    : h(b.tag, {}, b.text));
}
