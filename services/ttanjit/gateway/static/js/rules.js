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
 * and table cells ran into the text ("1. 1맨 위…", "• 551장벌점 7"). The
 * files stay verbatim; the page shows them tidied. */
export function tidy(line) {
  return line
    .replace(/^(\d+)\.\s*\1(?:\.\s*|(?=\D)|(?=\d))/, "$1. ")
    .replace(/^• 55(1장)(벌점 7)$/, "• 55 — $1 · $2")
    .replace(/^• (.*\D)(\d+장)(벌점 \d+)$/, "• $1 — $2 · $3")
    .replace(/^• (\d+번 줄)(\d+장 · 벌점 \d+)$/, "• $1 — $2");
}

export function renderRules(text) {
  const lines = text.split("\n").map((l) => tidy(l.trim())).filter(Boolean);
  const out = [];
  let list = null;
  lines.forEach((line, i) => {
    const bullet = line.startsWith("• ");
    const numbered = /^\d+\.?\s*\d*/.test(line) && /^\d/.test(line) && !/^\d+\s*(명|장|초|분)/.test(line);
    if (i === 0) {
      out.push(h("h2", {}, line));
    } else if (bullet || numbered) {
      if (!list) { list = h(bullet ? "ul" : "ol"); out.push(list); }
      list.append(h("li", {}, bullet ? line.slice(2) : line));
      return;
    } else if (line.length <= 20 && !/[.요다]$/.test(line)) {
      out.push(h("h3", {}, line));
    } else {
      out.push(h("p", {}, line));
    }
    list = null;
  });
  return out;
}
