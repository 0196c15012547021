// Unit tests of the page's pure modules (timeline, tensor formatting, source edits) against the
// hand-written fixture. Run with `npm test` (node:test; esbuild compiles the TypeScript).
import { test } from "node:test";
import assert from "node:assert/strict";
import { buildSync } from "esbuild";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(mkdtempSync(join(tmpdir(), "gradwalk-web-")), "pure.mjs");
const entry = `
export { buildFrames, stateAt, matchGradsOut } from "./timeline";
export { formatNumber, formatTensor, shapeText, normalizeShapes } from "./tensor";
export { setRetainGraph, hasRetainGraph, lastBackwardTarget } from "./snippet";
export { buildDot } from "./graph";
`;
buildSync({
  stdin: { contents: entry, resolveDir: join(here, "..", "src"), loader: "ts" },
  bundle: true, format: "esm", platform: "node", outfile: out, logLevel: "error",
});
const m = await import(pathToFileURL(out).href);
const run = () => JSON.parse(readFileSync(join(here, "..", "test-fixtures", "run-neuron.json"), "utf8"));

test("frames: a start frame plus one per step", () => {
  const frames = m.buildFrames(run());
  assert.equal(frames.length, 7);
  assert.deepEqual(frames[0], { pass: 0, applied: 0, error: false });
  assert.deepEqual(frames[6], { pass: 0, applied: 6, error: false });
});

test("start frame: the root is ready with the seed", () => {
  const r = run();
  const s = m.stateAt(r, { pass: 0, applied: 0, error: false });
  assert.deepEqual(s.ready.map((e) => e.node), ["n5"]);
  assert.equal(s.status.get("n5"), "ready");
  assert.equal(s.nodeGrad.get("n5")[0].data, 1);
  assert.equal(s.dependencies.get("n4"), 1);
  assert.equal(s.carried.size, 0);
});

test("after MulBackward0: edges lit, saved tensors freed, order as PyTorch", () => {
  const r = run();
  const s = m.stateAt(r, { pass: 0, applied: 4, error: false });
  assert.equal(s.status.get("n2"), "current");
  assert.deepEqual([...s.status].filter(([, st]) => st === "done").map(([id]) => id).sort(), ["n3", "n4", "n5"]);
  assert.deepEqual(s.ready.map((e) => e.node), ["n0", "n1"]);
  assert.ok(s.freed.has("n2/self") && s.freed.has("n2/other") && s.freed.has("n5/result"));
  assert.deepEqual([...s.releasedNow].sort(), ["n2/other", "n2/self"]);
  assert.equal(s.carried.size, 5);
  assert.deepEqual([...s.carriedNow].sort(), ["n2>n0#0", "n2>n1#1"]);
  assert.equal(s.leafGrads.get("b").data, 0.63473959);
  assert.equal(s.leafGrads.get("w"), null);
  // AccumulateGrad(w) is ready: its (complete) buffer comes from the step that pops it.
  assert.equal(s.nodeGrad.get("n0")[0].data, 1.26947918);
});

test("end: the leaf grads of the docs", () => {
  const r = run();
  const s = m.stateAt(r, { pass: 0, applied: 6, error: false });
  assert.equal(s.leafGrads.get("w").data, 1.26947918);
  assert.equal(s.leafGrads.get("x").data, 0.31736979);
  assert.equal(s.ready.length, 0);
});

test("a pass that raised gets an error frame", () => {
  const r = run();
  r.passes.push({ ...r.passes[0], steps: [], error: { type: "RuntimeError", message: "x", line: 6, col: 1 } });
  const frames = m.buildFrames(r);
  assert.deepEqual(frames.slice(-2), [
    { pass: 1, applied: 0, error: false },
    { pass: 1, applied: 0, error: true },
  ]);
  // the second pass starts from the first pass's .grad
  assert.equal(m.stateAt(r, frames.at(-1)).leafGrads.get("w").data, 1.26947918);
});

test("formatting", () => {
  assert.equal(m.formatNumber(0.63473959), "0.6347");
  assert.equal(m.formatNumber(1), "1");
  assert.equal(m.formatNumber(-0.3), "-0.3");
  assert.equal(m.formatNumber("nan"), "nan");
  // Python's f"{v:.4g}", as the server's step texts write numbers
  assert.equal(m.formatNumber(1e-7), "1e-07");
  assert.equal(m.formatNumber(123456.7), "1.235e+05");
  assert.equal(m.formatNumber(1.26947918), "1.269");
  assert.equal(m.formatNumber(1234.4), "1234");
  assert.equal(m.formatNumber(12346), "1.235e+04");
  assert.equal(m.formatNumber(0.0001), "0.0001");
  assert.equal(m.formatNumber(-2.5e-5), "-2.5e-05");
  assert.equal(m.formatNumber(Infinity), "inf");
  assert.equal(m.shapeText({ shape: [2, 3] }), "(2, 3)");
  assert.equal(m.shapeText({ shape: [3] }), "(3,)");
  assert.equal(m.normalizeShapes("sent 2x3 tensor to MulBackward0"), "sent (2, 3) tensor to MulBackward0");
  assert.equal(m.formatTensor(null), "None");
  assert.equal(m.formatTensor({ shape: [2, 2], dtype: "float32", data: [[1, 2], [3, 4.5]] }), "[[1, 2], [3, 4.5]]");
  assert.equal(m.formatTensor({ shape: [8], dtype: "float32", data: [1, 2, 3, 4, 5, 6, 7, 8] }), "[1, 2, 3, …, 6, 7, 8]");
});

test("retain_graph and backward() again edit the first / last backward call", () => {
  const src = "y = w * x\ny.backward()\n";
  const on = m.setRetainGraph(src, true);
  assert.equal(on, "y = w * x\ny.backward(retain_graph=True)\n");
  assert.ok(m.hasRetainGraph(on));
  assert.equal(m.setRetainGraph(on, false), src);
  assert.equal(m.lastBackwardTarget("a.backward()\nloss.backward()", null), "loss");
  assert.equal(m.lastBackwardTarget("", run()), "y");
});

test("DOT: one node per graph node plus the seed, edges drawn producer -> consumer", () => {
  const r = run();
  const { dot } = m.buildDot(r.passes[0], r);
  assert.equal((dot.match(/\[id="gn-/g) ?? []).length, 7);
  assert.match(dot, /"n4" -> "n5" \[id="ge-0", xlabel=" 0.6347 "\]/);
  assert.match(dot, /rankdir=BT/);
});

test("micrograd's order: nothing is read from a later step, and nothing is 'in the ready queue'", () => {
  const r = run();
  r.mode = "topo";
  // after the first step (TanhBackward0): AddBackward0 has what it has been sent so far
  const pass = r.passes[0];
  pass.steps[0].ready = pass.steps.slice(1).map((st) => ({ node: st.node, name: st.name, seq: st.seq }));
  pass.steps[0].buffers = [{ node: "n4", slots: [{ shape: [], dtype: "float32", data: 0.5 }] }];
  const s = m.stateAt(r, { pass: 0, applied: 1, error: false });
  assert.equal(s.status.get("n4"), "pending");
  assert.ok(![...s.status.values()].includes("ready"));
  assert.equal(s.nodeGrad.get("n4")[0].data, 0.5); // from the buffer, not the later step's grad_in
  for (const id of ["n0", "n1", "n2", "n3"]) assert.equal(s.nodeGrad.get(id), null, id);
  assert.equal(s.next, pass.steps[1].node);
});

test("the first pass starts from the .grad earlier forward passes left (grad_before)", () => {
  const r = run();
  for (const leaf of r.leaves) leaf.grad_before = { shape: [], dtype: "float32", data: 10 };
  const s = m.stateAt(r, { pass: 0, applied: 0, error: false });
  assert.equal(s.leafGrads.get("w").data, 10);
});

// ---- sequence numbers, printed text, a busy lab ---------------------------------------------
const out2 = join(mkdtempSync(join(tmpdir(), "gradwalk-web-")), "pure2.mjs");
buildSync({
  stdin: {
    contents: `
export { isMaxSeq, seqText, seqLabel, seqTitle, MAX_SEQ, MAX_SEQ_FULL } from "./panels/names";
export { printedText } from "./panels/log";
export { isBusy, busyDelay } from "./lessons/busy";
export { busyAnswer } from "./figures/common";
`,
    resolveDir: join(here, "..", "src"),
    loader: "ts",
  },
  bundle: true, format: "esm", platform: "node", outfile: out2, logLevel: "error",
  loader: { ".css": "empty" },
});
const p = await import(pathToFileURL(out2).href);

test("AccumulateGrad's sequence number is 2⁶⁴−1 however it is sent", () => {
  // the lab's API: null; a JSON integer: parses as 2**64; a string: exact
  for (const sent of [null, JSON.parse("18446744073709551615"), "18446744073709551615", 2n ** 64n - 1n]) {
    assert.equal(p.isMaxSeq(sent), true, String(sent));
    assert.equal(p.seqText(sent), "2⁶⁴−1");
    assert.equal(p.seqLabel(sent), "seq 2⁶⁴−1");
    assert.match(p.seqTitle(sent), /^18446744073709551615 /);
  }
  assert.equal(JSON.parse("18446744073709551615"), 2 ** 64);
  for (const seq of [0, 2, 14, 1_000_000_000]) {
    assert.equal(p.isMaxSeq(seq), false);
    assert.equal(p.seqText(seq), String(seq));
    assert.equal(p.seqTitle(seq), null);
  }
  // where null means "no sequence number" (a profiler event)
  assert.equal(p.seqText(null, "—"), "—");
  assert.equal(p.isMaxSeq(null, false), false);
  assert.equal(p.seqTitle(null, false), null);
});

test("printed text: each print's own newline, no blank line between prints", () => {
  assert.equal(p.printedText(["tensor(0.7616)\n", "tensor(0.5000)\n"]), "tensor(0.7616)\ntensor(0.5000)");
  assert.equal(p.printedText(["a b\n", "\n", "c\n"]), "a b\n\nc");  // print() alone: one empty line
  assert.equal(p.printedText(["no newline", "\n"]), "no newline");  // print(x, end="")
  assert.equal(p.printedText([]), "");
});

test("a busy lab is told from the snippet's own errors", () => {
  const e = (type, message = "", status) => ({ type, message, line: null, col: null, status });
  assert.equal(p.isBusy(e("NetworkError", "TypeError: Failed to fetch")), true);
  assert.equal(p.isBusy(e("HTTP 503", "busy")), true);
  assert.equal(p.isBusy(e("HTTP 502")), true);
  assert.equal(p.isBusy(e("Busy", "the lab is busy", 503)), true);
  assert.equal(p.isBusy(e("LimitError", "the snippet ran longer than 5 s", 422)), true);
  assert.equal(p.isBusy(e("LimitError", "more than 5,000 statements run", 422)), false);
  assert.equal(p.isBusy(e("RuntimeError", "Trying to backward through the graph a second time")), false);
  assert.equal(p.isBusy(e("SyntaxError", "invalid syntax", 400)), false);
  assert.equal(p.isBusy(e("HTTP 404")), false);
  assert.deepEqual([1, 2, 3, 4, 5, 6].map(p.busyDelay), [1000, 2000, 4000, 8000, 8000, 8000]);
  assert.equal(p.busyAnswer(503, null), true);
  assert.equal(p.busyAnswer(500, { detail: "pop from an empty deque" }), true);
  assert.equal(p.busyAnswer(422, { error: { type: "LimitError", message: "the snippet ran longer than 5 s" } }), true);
  assert.equal(p.busyAnswer(400, { detail: "x must be a number" }), false);
  assert.equal(p.busyAnswer(404, { detail: "no figure named 'nope'" }), false);
});
