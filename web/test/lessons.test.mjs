// Unit tests of the lesson pages' pure modules: progress storage and the score lines
// (lessons/progress.ts), and the routes (router.ts). Run with `npm test`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { buildSync } from "esbuild";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(mkdtempSync(join(tmpdir(), "gradwalk-lessons-")), "pure.mjs");
buildSync({
  stdin: {
    contents: `
export * from "./lessons/progress";
export { parseRoute, legacyAddress, routeKey, encodeCode, decodeCode, labAddress } from "./router";
`,
    resolveDir: join(here, "..", "src"),
    loader: "ts",
  },
  bundle: true, format: "esm", platform: "node", outfile: out, logLevel: "error",
});
const m = await import(pathToFileURL(out).href);

const QUIZ = [
  { id: "q1", choices: [{ id: "a", correct: false }, { id: "b", correct: true }] },
  { id: "q2", choices: [{ id: "a", correct: true }, { id: "b", correct: false }] },
  { id: "q3", choices: [{ id: "a", correct: true }, { id: "b", correct: false }] },
  { id: "q4", choices: [{ id: "a", correct: true }] },
  { id: "q5", choices: [{ id: "a", correct: true }] },
];

test("progress: values are kept per lesson, block and item", () => {
  const store = m.memoryStore();
  const one = new m.Progress(store, "chain-rule");
  const two = new m.Progress(store, "engine");
  one.set("quiz-1", "q1", { choice: "b" });
  two.set("quiz-1", "q1", { choice: "a" });
  assert.deepEqual(one.get("quiz-1", "q1"), { choice: "b" });
  assert.deepEqual(two.get("quiz-1", "q1"), { choice: "a" });
  assert.equal(one.get("quiz-1", "q2"), null);
  assert.equal(store.getItem("gradwalk.progress/chain-rule/quiz-1/q1"), '{"choice":"b"}');
  assert.equal(m.progressKey("a", "b", "c"), "gradwalk.progress/a/b/c");
});

test("progress: a block's clear (Retry) and the lesson's clear (Reset) leave the others alone", () => {
  const store = m.memoryStore();
  const p = new m.Progress(store, "chain-rule");
  const other = new m.Progress(store, "chain-rule-2"); // a lesson whose id starts like this one's
  p.set("quiz-1", "q1", { choice: "b" });
  p.set("quiz-10", "q1", { choice: "a" });
  p.set("cards-2", "c1", { flipped: true });
  other.set("quiz-1", "q1", { choice: "a" });
  p.clear("quiz-1");
  assert.equal(p.get("quiz-1", "q1"), null);
  assert.deepEqual(p.get("quiz-10", "q1"), { choice: "a" });
  assert.equal(p.count(), 2);
  p.clear();
  assert.equal(p.count(), 0);
  assert.deepEqual(other.get("quiz-1", "q1"), { choice: "a" });
});

test("progress: a corrupt value reads as nothing", () => {
  const store = m.memoryStore();
  store.setItem("gradwalk.progress/l/b/i", "{not json");
  assert.equal(new m.Progress(store, "l").get("b", "i"), null);
});

test("the quiz score line", () => {
  const answers = { q1: "b", q2: "b", q3: "a" };
  const score = m.quizScore(QUIZ, (q) => answers[q] ?? null);
  assert.deepEqual(score, { total: 5, answered: 3, correct: 2 });
  assert.equal(m.scoreLine(score), "3 / 5 answered · 2 correct");
  assert.equal(m.scoreLine(m.quizScore(QUIZ, () => null)), "0 / 5 answered · 0 correct");
  // a saved choice that no longer exists (the lesson changed) does not count
  assert.equal(m.quizScore(QUIZ, () => "zzz").answered, 0);
});

test("exam marks: full, half or none of each question's marks", () => {
  const questions = [{ id: "e1", marks: 2 }, { id: "e2", marks: 3 }, { id: "e3", marks: 2 }];
  const marks = { e1: "full", e2: "half", e3: "zero" };
  const total = m.examTotal(questions, (q) => marks[q] ?? null);
  assert.deepEqual(total, { got: 3.5, total: 7, marked: 3 });
  assert.equal(m.marksLine(total), "Marks: 3.5 / 7");
  assert.equal(m.marksLine(m.examTotal(questions, () => null)), "Marks: 0 / 7");
  assert.equal(m.formatMarks(1 / 3), "0.33");
});

test("the start page's summary line", () => {
  assert.equal(m.summaryLine(null), "Not started");
  assert.equal(m.summaryLine({ done: 0, total: 9 }), "Not started");
  assert.equal(m.summaryLine({ done: 4, total: 9 }), "4 of 9 self-checks done");
  assert.equal(m.summaryLine({ done: 9, total: 9 }), "All 9 self-checks done");
  const store = m.memoryStore();
  m.saveSummary(store, "engine", { done: 2, total: 5 });
  assert.deepEqual(m.readSummary(store, "engine"), { done: 2, total: 5 });
  assert.equal(m.readSummary(store, "other"), null);
});

test("routes by path", () => {
  assert.deepEqual(m.parseRoute("/"), { page: "start" });
  assert.deepEqual(m.parseRoute("/lab"), { page: "lab", preset: null, code: null });
  assert.deepEqual(m.parseRoute("/lab/", "?preset=neuron"), { page: "lab", preset: "neuron", code: null });
  assert.deepEqual(m.parseRoute("/lessons/chain-rule", "", "#the-chain-rule"), { page: "lesson", id: "chain-rule", section: "the-chain-rule" });
  assert.deepEqual(m.parseRoute("/lessons/chain-rule"), { page: "lesson", id: "chain-rule", section: null });
  assert.deepEqual(m.parseRoute("/figures/dead-relu"), { page: "figure", id: "dead-relu" });
  assert.equal(m.parseRoute("/lessons/a/b").page, "missing");
  assert.equal(m.parseRoute("/nowhere").page, "missing");
  assert.equal(m.routeKey(m.parseRoute("/lessons/engine")), "lessons/engine");
  assert.equal(m.routeKey(m.parseRoute("/figures/xor")), "xor");
});

test("the old hash addresses move to paths", () => {
  assert.equal(m.legacyAddress("/", "#/figure/chain-rule"), "/figures/chain-rule");
  assert.equal(m.legacyAddress("/", "#/"), "/lab");
  assert.equal(m.legacyAddress("/", ""), null);
  assert.equal(m.legacyAddress("/lessons/engine", "#/figure/xor"), null);
});

test("a snippet travels in the address as base64url", () => {
  const code = "x = torch.tensor(2.0, requires_grad=True)\n(x ** 3).backward()  # ∂ → 12\nprint(x.grad)\n";
  const address = m.labAddress(code);
  assert.match(address, /^\/lab#code=[A-Za-z0-9_-]+$/);
  const route = m.parseRoute("/lab", "", address.slice(4));
  assert.equal(route.code, code);
  assert.equal(m.decodeCode(m.encodeCode("")), "");
  assert.equal(m.decodeCode("!!!"), null);
});
