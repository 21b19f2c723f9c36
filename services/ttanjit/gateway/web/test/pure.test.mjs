// Unit tests of the web client's pure modules (node's own test runner:
// `node --test`, run by `make test` through tests/unit/test_web_client_js.py).
import { test } from "node:test";
import assert from "node:assert/strict";

import { cannotGo, effectText, logLine, refusalText } from "../../static/js/onecard_text.js";
import { ocParse, ocName, ocSort, prPenalty, hkParse, hkSort, selectionAfter, spokenCards } from "../../static/js/cards.js";
import { placeMs, REVEAL_MS } from "../../static/js/anim.js";
import { placeText, josa, num, signed, scoreText, progressText, boardLine, roomNews, seatNames } from "../../static/js/state.js";

test("One Card preview adds up the attack strengths the view carries", () => {
  const view = { hand: ["2H", "2C", "5S"], pending: 0, attack: { "2H": 2, "2C": 2 } };
  assert.equal(effectText(["2H", "2C"], view), "♥2 · ♣2: 다음 사람에게 공격 4장");
  const jokers = { hand: ["BJ", "CJ", "5S"], pending: 0, attack: { BJ: 5, CJ: 7 } };
  assert.match(effectText(["BJ", "CJ"], jokers), /공격 12장 · 다음 무늬를 골라요/);
  const passOn = { hand: ["AS", "9D"], pending: 3, attack: { AS: 5 } };
  assert.equal(effectText(["AS"], passOn), "♠A: 공격을 넘겨요: 모두 8장");
});

test("One Card preview of cards without attack", () => {
  const view = { hand: ["3H", "7S", "JD", "JC", "QS", "KH", "5C"], pending: 2, twos_only: true, attack: {} };
  assert.equal(effectText(["3H"], { ...view, suit: "H" }), "♥3: 2 공격 2장을 막아요");
  // only a 3 of the current suit: "같은 무늬 2의 공격" read as a chain of one suit (copy audit)
  assert.equal(effectText(["3H"], { ...view, suit: "C" }), "♥3: 지금 무늬(♣)의 3만 2 공격을 막아요");
  // a 3 blocks only 2s (RULES.md 1.5): on a joker's 공격 8장 it said "공격 8장을 막아요" (trial finding)
  assert.equal(effectText(["3S"], { ...view, pending: 8, twos_only: false }), "♠3: 3은 2로만 이어진 공격만 막아요");
  const calm = { ...view, pending: 0 };
  assert.equal(effectText(["7S"], calm), "♠7: 다음 무늬를 골라요");
  assert.equal(effectText(["JD", "JC"], calm), "♦J · ♣J: 2명을 건너뛰어요");
  assert.equal(effectText(["QS"], calm), "♠Q: 순서 방향이 바뀌어요");
  assert.equal(effectText(["KH"], calm), "♥K: 한 번 더 해요");
  assert.equal(effectText(["5C"], calm), "♣5: 효과 없음");
  assert.equal(effectText(["5C"], { hand: ["5C"], pending: 0 }), "♣5: 마지막 카드 — 내면 이겨요");
  assert.equal(effectText([], calm), "");
});

test("One Card preview says what a card does, never whether it may go (the seed)", () => {
  // the user's rule page: "낼 수 있는 카드는 화면이 알려 주지 않으니 직접
  // 찾아요" — a preview that said "낼 수 없어요" on selection told it
  // (trial finding); the reason comes with [카드 내기]'s refusal
  const named = { seat: 0, turn: 0, hand: ["5D", "9S", "7C", "JH"], top: "7D", suit: "S", pending: 0,
    attack: {}, cannot: { "5D": "named_suit", JH: "named_suit" } };
  assert.equal(effectText(["5D"], named), "♦5: 효과 없음");
  assert.equal(effectText(["JH"], named), "♥J: 다음 사람을 건너뛰어요");
  const attacked = { seat: 0, turn: 0, hand: ["JH", "7H", "3H", "3C", "AH", "2C"], top: "2H", suit: "H",
    pending: 2, twos_only: true, attack: { AH: 3, "2C": 2 },
    cannot: { JH: "under_attack", "7H": "under_attack", "3C": "does_not_match" } };
  assert.equal(effectText(["7H"], attacked), "♥7: 다음 무늬를 골라요");
  assert.equal(effectText(["AH"], attacked), "♥A: 공격을 넘겨요: 모두 5장");
  // a 7 that cannot go is sent for its refusal, no suit asked first
  assert.equal(cannotGo(["7H"], attacked), true);
  assert.equal(cannotGo(["3C", "3H"], attacked), false); // a group goes by its best first card
  assert.equal(cannotGo(["7C"], named), false); // the top's rank
  assert.equal(cannotGo(["5D"], { ...named, turn: 1 }), false); // picked before my turn: not judged yet
});

test("One Card refusal says why in the words of the table (RULES.md 1.2, 1.5)", () => {
  // trial finding: on ♦7 that named ♠, ♦5 was refused "맨 위 카드와 무늬나
  // 숫자가 맞지 않아요." though it matched the top's suit on screen
  const named = { seat: 0, turn: 0, hand: ["5D", "9S"], top: "7D", suit: "S", pending: 0 };
  assert.equal(refusalText("named_suit", ["5D"], named), "♦5: 낼 수 없어요 — 바뀐 무늬 ♠ 스페이드, 같은 숫자(7) 또는 조커만 낼 수 있어요");
  const plain = { ...named, top: "9D", suit: "D" };
  assert.equal(refusalText("does_not_match", ["JH"], plain), "♥J: 낼 수 없어요 — ♦ 다이아몬드 무늬, 같은 숫자(9) 또는 조커만 낼 수 있어요");
  const joker = { ...named, top: "BJ", suit: "H" };
  assert.equal(refusalText("joker_named_suit", ["9S"], joker), "♠9: 낼 수 없어요 — 조커 위에는 바뀐 무늬 ♥ 하트 또는 조커만 낼 수 있어요");
  // under the joker's attack the named suit is not what may be played (copy audit)
  assert.equal(refusalText("joker_named_suit", ["AS"], { ...joker, pending: 5 }),
    "♠A: 낼 수 없어요 — 흑백 조커 공격은 컬러 조커로, 고른 무늬가 ♠이면 ♠A로도 넘길 수 있어요");
  const attacked = { seat: 0, turn: 0, top: "2H", suit: "H", pending: 2 };
  assert.equal(refusalText("under_attack", ["JH"], attacked), "♥J: 낼 수 없어요 — 공격을 받는 중이라 공격 카드로 넘기거나 받아야 해요");
  assert.equal(refusalText("does_not_match", ["3C"], attacked), "♣3: 낼 수 없어요 — ♥ 하트 3으로만 막을 수 있어요");
  // on the colour joker nothing is strong enough (review finding: it said "♥ 하트")
  assert.equal(refusalText("weaker_attack", ["2C"], { ...attacked, top: "CJ", pending: 7 }),
    "♣2: 낼 수 없어요 — 지금 공격보다 약한 카드로는 넘길 수 없어요");
  // any other refusal: the server's own message
  assert.equal(refusalText("not_your_turn", ["5D"], named), "");
});

test("One Card card codes", () => {
  assert.deepEqual(ocParse("10H"), { rank: "10", suit: "H", joker: false });
  assert.deepEqual(ocParse("CJ"), { rank: "CJ", suit: null, joker: true });
  assert.equal(ocName("BJ"), "흑백 조커");
  assert.equal(ocName("AS"), "♠A");
  assert.equal(ocSort(["KH", "2S", "CJ", "AS"]).length, 4);
});

test("줄줄이 벌점 card penalties add up to 171", () => {
  let total = 0;
  for (let n = 1; n <= 104; n++) total += prPenalty(n);
  assert.equal(total, 171);
  assert.deepEqual([55, 11, 10, 5, 1].map(prPenalty), [7, 5, 3, 2, 1]);
});

test("Hakka card codes sort and parse", () => {
  const p = hkParse("gon3");
  assert.equal(typeof p, "object");
  assert.equal(hkSort(["sin7", "sup3", "gon4"]).length, 3);
});

test("an accepted action clears the cards it was pressed with, not cards picked meanwhile", () => {
  // One Card: a K plays again, and its update may come before the answer to
  // the play; the player already picks the next card then
  assert.deepEqual(selectionAfter(["KH"], ["KH"]), []);
  assert.deepEqual(selectionAfter(["KH"], []), []); // the update took the played card away
  assert.deepEqual(selectionAfter(["KH"], ["5S"]), ["5S"]);
  assert.deepEqual(selectionAfter(["5S", "5C"], ["5S"]), ["5S"]); // changed meanwhile: kept
  assert.deepEqual(selectionAfter([], ["9D"]), ["9D"]); // a draw pressed with nothing picked
});

test("내 기록 says where I finished: by 벌점 fewest first, by 점수 most first, ties share", () => {
  assert.equal(placeText({ game: "penalty_rows", seat: 1, scores: [12, 30, 71] }), "2위 · 벌점 30");
  assert.equal(placeText({ game: "penalty_rows", seat: 2, scores: [30, 12, 12] }), "1위 · 벌점 12");
  assert.equal(placeText({ game: "hakka", seat: 0, scores: [42, 50, 10, 3] }), "2위 · 42점");
  assert.equal(placeText({ game: "onecard", seat: 0, scores: null }), ""); // 승/패 says it
  // an abandoned game has no places (it read "무효 1위 · 0점")
  assert.equal(placeText({ game: "hakka", seat: 0, scores: [0, 0, 0, 0], ended_by: "abandoned" }), "");
  assert.equal(placeText({ game: "hakka", seat: 3, scores: [1, 2] }), ""); // no score of mine
  // a seat I left: the bot's place (the rating counts me last)
  assert.equal(placeText({ game: "penalty_rows", seat: 1, scores: [12, 30, 71], outcome: "left" }),
    "봇이 이어서 2위 · 벌점 30");
});

test("particles fit the word they follow (이/가, 은/는, 을/를, 으로/로)", () => {
  assert.equal(josa("철수", "이/가"), "철수가");
  assert.equal(josa("김철수 (나)", "이/가"), "김철수 (나)가");
  assert.equal(josa("봇2 (보통)", "이/가"), "봇2 (보통)이");
  assert.equal(josa("7", "은/는"), "7은");
  assert.equal(josa("104", "은/는"), "104는");
  assert.equal(josa("서울", "으로/로"), "서울로");
  assert.equal(josa("부산", "으로/로"), "부산으로");
  assert.equal(josa("하나", "으로/로"), "하나로");
  assert.equal(josa("Kim", "이/가"), "Kim이(가)");
  // unknown, (으)로 as Korean writes it ("새이름😀으로(로) 보여요.": trial nitpick)
  assert.equal(josa("새이름😀", "으로/로"), "새이름😀(으)로");
  assert.equal(josa("Lee", "으로/로"), "Lee(으)로");
  // a letter on its own is read by its name ("재미A이(가)": trial nitpick)
  assert.equal(josa("재미A", "이/가"), "재미A가");
  assert.equal(josa("민수L", "이/가"), "민수L이");
  assert.equal(josa("팀M", "은/는"), "팀M은");
  assert.equal(josa("B", "을/를"), "B를");
  assert.equal(josa("7A (나)", "이/가"), "7A (나)가");
});

test("a negative number has a real minus (하카 카드 pays, RULES.md 3.8), as the rating label", () => {
  assert.equal(num(-6), "−6");
  assert.equal(num(0), "0");
  assert.equal(num(12), "12");
  assert.equal(signed(-7), "−7");
  assert.equal(signed(12), "+12");
  assert.equal(signed(0), "±0");
  assert.equal(scoreText("hakka", -6), "−6점");
  assert.equal(scoreText("penalty_rows", 30), "벌점 30");
  assert.equal(placeText({ game: "hakka", seat: 1, scores: [42, -6, 10, 3] }), "4위 · −6점");
});

test("the 관전 list says a game every player left is waiting (RULES.md 4), not going on", () => {
  assert.equal(progressText({ round: 2, rounds: 3 }), "2/3판");
  assert.equal(progressText({ cards: [7, 6, 6] }), "남은 카드 7·6·6");
  assert.equal(progressText({ cards: [7, 6, 6], paused: true }), "멈춤 (모두 연결 끊김) · 남은 카드 7·6·6");
  assert.equal(progressText({}), "");
  // a seat out of the game is 탈락, not 0 cards as a winner's (replay audit)
  assert.equal(progressText({ cards: [null, 4, 7] }), "남은 카드 탈락·4·7");
});

test("순위 says how to get on when nobody is ranked yet (it said \"0명의 순위\")", () => {
  assert.deepEqual(boardLine({ min_games: 3, players: 0 }, ""), ["3게임 이상 하면 순위에 올라요."]);
  // what I still need says it once (it said "순위에 올라요" twice: trial nitpick)
  assert.deepEqual(boardLine({ min_games: 3, players: 0 }, "2게임 더 하면 순위에 올라요 (지금 1,500)."),
    ["2게임 더 하면 순위에 올라요 (지금 1,500)."]);
  assert.deepEqual(boardLine({ min_games: 3, players: 12 }, "내 순위: 4위 (1,612)"),
    ["순위에 오른 사람 12명 (3게임 이상)", "내 순위: 4위 (1,612)"]);
  assert.deepEqual(boardLine({ min_games: 3, players: 1 }, ""), ["순위에 오른 사람 1명 (3게임 이상)"]);
});

test("One Card's log says a timeout's own move once (trial: a timeout read as two draws)", () => {
  const name = (s) => ["나래", "민수", "봇3 (보통)"][s];
  const lines = (events) => { const said = {}; return events.map((e) => logLine(e, name, 0, said)).filter(Boolean).map((l) => l.text); };
  assert.deepEqual(lines([{ type: "timeout", seat: 1, action: "draw" }, { type: "drew", seat: 1, reason: "draw", count: 1 },
    { type: "drew", seat: 2, reason: "draw", count: 1 }]),
  ["민수: 시간이 지나 자동으로 1장 뽑았어요.", "봇3 (보통): 1장 뽑았어요."]);
  // its autopilot switch and a reshuffle may come between
  assert.deepEqual(lines([{ type: "timeout", seat: 1, action: "take" }, { type: "autopilot", seat: 1, on: true },
    { type: "reshuffled", cards: 12 }, { type: "drew", seat: 1, reason: "take", count: 4 }]),
  ["민수: 시간이 지나 자동으로 받았어요.", "민수: 자동 진행으로 바뀌었어요.", "버린 카드 12장을 섞어 뽑기 더미를 만들었어요."]);
  assert.deepEqual(lines([{ type: "timeout", seat: 1, action: "pass" }, { type: "passed", seat: 1 }]),
    ["민수: 시간이 지나 자동으로 넘겼어요."]);
  // the next draw is said again, and another seat's at once
  assert.deepEqual(lines([{ type: "timeout", seat: 1, action: "draw" }, { type: "drew", seat: 1, reason: "draw", count: 1 },
    { type: "drew", seat: 1, reason: "draw", count: 1 }]),
  ["민수: 시간이 지나 자동으로 1장 뽑았어요.", "민수: 1장 뽑았어요."]);
  assert.deepEqual(lines([{ type: "timeout", seat: 1, action: "draw" }, { type: "drew", seat: 2, reason: "draw", count: 1 }]),
    ["민수: 시간이 지나 자동으로 1장 뽑았어요.", "봇3 (보통): 1장 뽑았어요."]);
});

test("줄줄이 벌점's reveal places a small table's picks at 450 ms each, a big one's within 2.4 s (RULES.md 2.5: the turn's deadline runs)", () => {
  assert.equal(placeMs(2), 450);
  assert.equal(placeMs(5), 450);
  assert.equal(placeMs(8), 300);
  assert.equal(placeMs(10), 240);
  for (let n = 1; n <= 10; n++) assert.ok(placeMs(n) * n <= Math.max(REVEAL_MS, 450), n);
  assert.equal(placeMs(0), 450); // nothing to place: no division by zero
});

test("a room's news says who came in, who went and who is 방장 now (rooms audit: the seats changed unsaid)", () => {
  const room = (host, ...people) => ({ code: "ABCDEF", host, members: [
    ...people.map(([player, nickname], seat) => ({ seat, kind: "human", player, nickname })),
    { seat: 9, kind: "bot", level: "hard" }] });
  const ha = ["pa", "하늘"];
  const jun = ["pb", "준호"];
  assert.deepEqual(roomNews(room("pa", ha), room("pa", ha, jun), "pa").map((n) => n.text), ["준호가 들어왔어요."]);
  assert.deepEqual(roomNews(room("pa", ha), room("pa", ha, jun), "pb"), []); // my own coming in
  assert.deepEqual(roomNews(room("pa", ha, jun), room("pb", jun), "pb").map((n) => n.text),
    ["하늘이 나갔어요.", "이제 내가 방장이에요. 봇을 넣고 게임을 시작할 수 있어요."]);
  assert.deepEqual(roomNews(room("pa", ha, jun, ["pc", "민지"]), room("pc", jun, ["pc", "민지"]), "pb").map((n) => n.text),
    ["하늘이 나갔어요.", "이제 민지가 방장이에요."]);
  assert.deepEqual(roomNews(room("pa", ha, jun), room("pa", ha, jun), "pa"), []); // a bot or an option
  assert.deepEqual(roomNews(null, room("pa", ha), "pa"), []);
  assert.deepEqual(roomNews(room("pa", ha), { ...room("pa", ha, jun), code: "ZZZZZZ" }, "pa"), []);
});

test("One Card's log says what a play did beyond its cards (RULES.md 1.3, 1.5; replay audit)", () => {
  const name = (s) => ["나래", "민수", "봇3 (보통)"][s];
  const lines = (events) => { const said = {}; return events.map((e) => logLine(e, name, 0, said)).filter(Boolean).map((l) => l.text); };
  const played = (seat, cards, pending = 0) => ({ type: "played", seat, cards, suit: "C", pending, left: 5 });
  assert.deepEqual(lines([played(0, ["2H"], 2), played(1, ["2C"], 4), played(2, ["3C", "3D"])]),
    ["나래: ♥2 · 공격 2장", "민수: ♣2 · 공격 4장", "봇3 (보통): ♣3 ♦3 · 공격 4장을 막았어요"]);
  // a 3 after the attack was taken blocks nothing
  assert.deepEqual(lines([played(0, ["2H"], 2), { type: "drew", seat: 1, reason: "take", count: 2 }, played(2, ["3H"])]),
    ["나래: ♥2 · 공격 2장", "민수: 공격 2장을 받았어요.", "봇3 (보통): ♥3"]);
  assert.deepEqual(lines([played(0, ["JH"]), played(1, ["JC", "JS"]), played(2, ["QC"]), played(0, ["QC", "QH"]), played(1, ["KC"])]),
    ["나래: ♥J · 건너뛰기", "민수: ♣J ♠J · 2명 건너뛰기", "봇3 (보통): ♣Q · 방향이 바뀌었어요", "나래: ♣Q ♥Q", "민수: ♣K · 한 번 더"]);
});

test("a room's news says whose connection went and came back (RULES.md 4: the seat waits a minute)", () => {
  const room = (away) => ({ code: "ABCDEF", host: "pa", members: [
    { seat: 0, kind: "human", player: "pa", nickname: "하늘" },
    { seat: 1, kind: "human", player: "pb", nickname: "준호", ...(away ? { away: true } : {}) }] });
  assert.deepEqual(roomNews(room(false), room(true), "pa"), [{ text: "준호의 연결이 끊겼어요. 1분 안에 돌아오지 않으면 방에서 나가요.", away: "pb" }]);
  assert.deepEqual(roomNews(room(true), room(false), "pa"), [{ text: "준호가 다시 연결됐어요.", back: "pb" }]);
  assert.deepEqual(roomNews(room(true), room(true), "pa"), []);
  assert.deepEqual(roomNews(room(false), room(true), "pb"), []); // (my own: I am not here to read it)
});

test("One Card's log notes no effect of a last card (RULES.md 1.6: it wins, its J, Q or K does nothing)", () => {
  const name = (s) => ["나래", "민수"][s];
  assert.equal(logLine({ type: "played", seat: 1, cards: ["KC"], suit: "C", pending: 0, left: 0 }, name, 0, {}).text, "민수: ♣K");
  assert.equal(logLine({ type: "played", seat: 1, cards: ["7C"], suit: "C", pending: 0, left: 0 }, name, 0, {}).text, "민수: ♣7");
});

test("One Card's cards in a line to be said are named, not a suit's sign (a11y audit)", () => {
  assert.equal(spokenCards("봇2 (보통): ♠7 ♣7 · 무늬 → 스페이드"), "봇2 (보통): 스페이드 7 클로버 7 · 무늬 → 스페이드");
  assert.equal(spokenCards("키보드원: ♥K · 한 번 더"), "키보드원: 하트 K · 한 번 더");
  assert.equal(spokenCards("♦10 · ♣A: 공격 3장"), "다이아몬드 10 · 클로버 A: 공격 3장");
  assert.equal(spokenCards("흑백 조커 · 줄줄이 벌점 10"), "흑백 조커 · 줄줄이 벌점 10");
});

test("One Card's lone last 2, A or joker says it cannot be the last card, and what to do (RULES.md 1.6, 원카드 audit)", () => {
  const attacked = { hand: ["2S"], pending: 2, top: "2H", suit: "H", attack: { "2S": 2 } };
  assert.equal(effectText(["2S"], attacked), "♠2: 2·A·조커는 마지막 카드가 될 수 없어요");
  assert.equal(refusalText("last_card_forbidden", ["2S"], attacked),
    "♠2: 낼 수 없어요 — 2·A·조커는 마지막 카드가 될 수 없어요. 쌓인 공격 2장을 받아요");
  const calm = { hand: ["AS"], pending: 0, top: "5S", suit: "S", attack: { AS: 5 } };
  assert.equal(refusalText("last_card_forbidden", ["AS"], calm),
    "♠A: 낼 수 없어요 — 2·A·조커는 마지막 카드가 될 수 없어요. 1장 뽑아요");
  assert.equal(effectText(["9S"], { hand: ["9S"], pending: 0, attack: {} }), "♠9: 마지막 카드 — 내면 이겨요");
});

test("Two players of one nickname at a table are told apart by their seats", () => {
  const players = [{ seat: 0, kind: "human", nickname: "민수" }, { seat: 1, kind: "bot", level: "hard" },
    { seat: 2, kind: "human", nickname: "민수" }, { seat: 3, kind: "human", nickname: "지은" }, { seat: 4, kind: "human" }];
  assert.deepEqual(seatNames(players), { 0: "민수 (1번)", 1: "봇2 (어려움)", 2: "민수 (3번)", 3: "지은", 4: "5번" });
  assert.deepEqual(seatNames([{ seat: 0, kind: "human", nickname: "민수" }]), { 0: "민수" });
});

test("the rules pages' lists hold only their bullets and numbered steps (copy audit)", async () => {
  const { rulesBlocks } = await import("../../static/js/rules.js");
  const { readFileSync } = await import("node:fs");
  const page = (g) => rulesBlocks(readFileSync(new URL(`../../static/rules/${g}.txt`, import.meta.url), "utf8"));
  const after = (blocks, text) => blocks[blocks.findIndex((b) => b.text === text) + 1];
  const onecard = page("onecard");
  // a line that only starts with a number is text: it was the 4th step of 내 차례
  const turn = after(onecard, "내 차례");
  assert.equal(turn.tag, "ol");
  assert.deepEqual(turn.items.map((s) => s.slice(0, 2)), ["1.", "2.", "3."]);
  assert.equal(onecard[onecard.indexOf(turn) + 1].tag, "p");
  assert.match(onecard[onecard.indexOf(turn) + 1].text, /^7이나 조커로/);
  const rows = page("penalty_rows");
  assert.equal(after(rows, "목표").tag, "p");
  assert.ok(rows.some((b) => b.tag === "p" && b.text.startsWith("2~10명이")), "2~10명이 is a paragraph");
  // the example: its rows (with the cards the steps name) and its steps are two lists
  const example = rows.slice(rows.findIndex((b) => b.text === "처리 예시"));
  assert.deepEqual(example.slice(1, 5).map((b) => b.tag), ["p", "ul", "ol", "p"]);
  assert.deepEqual(example[2].items, ["1번 줄 — …·12 (2장 · 벌점 2)", "2번 줄 — 25·29·31·34 (4장 · 벌점 5)",
    "3번 줄 — 46 (1장 · 벌점 1)", "4번 줄 — 2장 · 벌점 8"]);
  assert.match(example[3].items[0], /^1\. 35는 2번 줄 끝\(34\)/);
  assert.match(example[4].text, /^36을 낸 사람이/);
  // every numbered step reads "N. " once (the seed's "1. 1. 고른 줄")
  for (const g of ["onecard", "penalty_rows", "hakka"]) {
    for (const b of page(g).filter((x) => x.tag === "ol")) {
      b.items.forEach((s, i) => assert.ok(s.startsWith(`${i + 1}. `) && !s.startsWith(`${i + 1}. ${i + 1}.`), `${g}: ${s}`));
    }
  }
});

test("the Hakka rules call leading a trick 리드, as the table's buttons and the seed do", async () => {
  const { readFileSync } = await import("node:fs");
  const text = readFileSync(new URL("../../static/rules/hakka.txt", import.meta.url), "utf8");
  assert.match(text, /리드라고 해요/);
  assert.doesNotMatch(text, /트릭을 시작|시작할 때는|로 시작/);
});

test("a code typed with the keyboard in 한글 mode is told apart (IME audit)", async () => {
  const { hangulTyped } = await import("../../static/js/state.js");
  assert.equal(hangulTyped("뮻ㅇ2ㅌ"), true); // "abcd2x" in 두벌식
  assert.equal(hangulTyped("ㅁ"), true);
  assert.equal(hangulTyped("ABCD-EFGH"), false);
  assert.equal(hangulTyped(" abcd efgh "), false);
});

test("a nickname's length is counted as the server counts it, not in UTF-16 units", async () => {
  const { nicknameTooLong, NICK_MAX } = await import("../../static/js/state.js");
  const { readFileSync } = await import("node:fs");
  const auth = readFileSync(new URL("../../auth.py", import.meta.url), "utf8");
  assert.match(auth, new RegExp(`^NICK_MAX = ${NICK_MAX}$`, "m")); // the server's own most
  assert.equal(nicknameTooLong("😀".repeat(16)), false); // 32 UTF-16 units: the box took 8
  assert.equal(nicknameTooLong("😀".repeat(17)), true);
  assert.equal(nicknameTooLong("가".repeat(16)), false);
  assert.equal(nicknameTooLong("a".repeat(17)), true);
  assert.equal(nicknameTooLong(`  ${"김".repeat(16)}  `), false); // blanks around are dropped, as the server does
  assert.equal(nicknameTooLong("👨‍💻".repeat(5) + "a"), false); // a joined emoji: 3 of 16
  assert.equal(nicknameTooLong("👨‍💻".repeat(5) + "ab"), true);
  assert.equal(nicknameTooLong("\u1100\u1161".repeat(16)), false); // 가 in parts: one once composed (NFC)
  // the blanks around are Python's (str.strip), not JS trim's (review finding)
  assert.equal(nicknameTooLong("가".repeat(16) + "\u0085"), false);
  assert.equal(nicknameTooLong("\u001f" + "가".repeat(16)), false);
  assert.equal(nicknameTooLong("가".repeat(16) + "\ufeff"), true); // kept by the server: 17
});
