// The lab page: wires the API client, the editor, the controls, the graph and the panels.
// Data flow: POST /api/run → RunResponse → frames (timeline.ts) → the frame at `cursor`
// → PassState → every panel renders from it.

import "./style.css";
import { ApiFailure, fetchPresets, runSnippet } from "./api";
import { createControls } from "./controls";
import { fill, empty } from "./dom";
import { createEditor } from "./editor";
import { loadGraphviz, renderGraph, updateGraph, type GraphView } from "./graph";
import { buildMenu, startRouter } from "./figures/index";
import { createZoom } from "./zoom";
import { renderBuffers } from "./panels/buffers";
import { createComparePanel } from "./panels/compare";
import { createProfilePanel } from "./panels/profile";
import { renderDeps } from "./panels/deps";
import { collectErrors, renderErrors } from "./panels/error";
import { renderLeafGrads } from "./panels/leafgrads";
import { renderLog } from "./panels/log";
import { nodeById } from "./panels/names";
import { renderQueue } from "./panels/queue";
import { renderSaved } from "./panels/saved";
import { buildFrames, stateAt, type Frame, type PassState } from "./timeline";
import { hasRetainGraph, lastBackwardTarget, setRetainGraph } from "./snippet";
import type { ApiError, Mode, Preset, RunResponse } from "./types";

function $(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing from index.html`);
  return el;
}

const els = {
  editor: $("editor"),
  run: $("run") as HTMLButtonElement,
  again: $("again") as HTMLButtonElement,
  newforward: $("newforward") as HTMLButtonElement,
  retain: $("retain") as HTMLInputElement,
  mode: $("mode") as HTMLSelectElement,
  preset: $("preset") as HTMLSelectElement,
  graph: $("graph"),
  graphCaption: $("graph-caption"),
  queue: $("queue"),
  deps: $("deps"),
  buffers: $("buffers"),
  saved: $("saved"),
  leafgrads: $("leafgrads"),
  log: $("log"),
  error: $("error"),
  announce: $("announce"),
};

// ---- page state -------------------------------------------------------------------------
let run: RunResponse | null = null;
let failure: ApiError | null = null;
let frames: Frame[] = [];
let cursor = 0;
let graphView: GraphView | null = null;
let latestRequest = 0;
let runsDone = 0;

const zoom = createZoom(els.graph, {
  fit: $("zoom-fit") as HTMLButtonElement,
  actual: $("zoom-actual") as HTMLButtonElement,
  zoomIn: $("zoom-in") as HTMLButtonElement,
  zoomOut: $("zoom-out") as HTMLButtonElement,
  readout: $("zoom-level"),
});
const editor = createEditor(els.editor, "", () => void runSource());
const controls = createControls({
  step: () => moveTo(cursor + 1),
  back: () => void moveTo(cursor - 1),
  end: () => void moveTo(frames.length - 1),
  reset: () => void moveTo(0),
  run: () => void runSource(),
});

// ---- running --------------------------------------------------------------------------
function currentMode(): Mode {
  return els.mode.value === "topo" ? "topo" : "pytorch";
}

function setBusy(busy: boolean): void {
  document.body.dataset.busy = busy ? "1" : "0";
  for (const b of [els.run, els.again, els.newforward]) b.setAttribute("aria-busy", busy ? "true" : "false");
}

/** POST the editor's text; show the first pass (or the last one, for "backward() again").
 *  `sequenceStart`: where the sequence numbers start (0 unless "New forward pass"). */
async function runSource(options: { showLastPass?: boolean; sequenceStart?: number } = {}): Promise<void> {
  const source = editor.getText();
  const sequenceStart = options.sequenceStart ?? 0;
  const request = ++latestRequest;
  controls.stopPlay();
  setBusy(true);
  let response: RunResponse | null = null;
  let error: ApiError | null = null;
  try {
    response = await runSnippet(source, currentMode(), sequenceStart);
  } catch (e) {
    error =
      e instanceof ApiFailure ? e.error : { type: "Error", message: String(e), line: null, col: null };
  }
  if (request !== latestRequest) return; // a newer run has started; drop this answer
  run = response;
  failure = error;
  frames = run ? buildFrames(run) : [];
  cursor = 0;
  if (options.showLastPass && run && run.passes.length > 1) {
    const last = run.passes.length - 1;
    cursor = Math.max(0, frames.findIndex((f) => f.pass === last));
  }
  graphView = null;
  els.retain.checked = hasRetainGraph(source);

  const errors = collectErrors(run, failure);
  renderErrors(els.error, errors);
  editor.markError(errors.find((e) => e.line != null)?.line ?? null);
  render();
  setBusy(false);
  document.body.dataset.sequenceStart = String(sequenceStart);
  document.body.dataset.runs = String(++runsDone);
}

// ---- stepping -------------------------------------------------------------------------
function moveTo(target: number): boolean {
  if (!frames.length) return false;
  const next = Math.max(0, Math.min(frames.length - 1, target));
  if (next === cursor) return false;
  cursor = next;
  render();
  return true;
}

function positionLabel(frame: Frame | null): string {
  if (!run) return failure ? "The request failed" : "No run yet";
  if (!frame) return run.error ? "The snippet failed before backward()" : "The snippet never called backward()";
  const pass = run.passes[frame.pass];
  const head = `Pass ${frame.pass + 1} of ${run.passes.length}`;
  const total = pass.steps.length;
  if (frame.error) return `${head} · stopped: ${pass.error?.type ?? "error"}`;
  if (frame.applied === 0) {
    const then = pass.error ? `, then ${pass.error.type}` : " to go";
    return `${head} · start (${total} step${total === 1 ? "" : "s"}${then})`;
  }
  return `${head} · step ${frame.applied} of ${total}`;
}

/** The editor line to highlight: the line that created the node just run, or the pass's call. */
function activeLine(state: PassState): number | null {
  const node = state.step ? nodeById(state.graph, state.step.node) : null;
  const name = node?.kind === "accumulate" ? node.variable : node?.forward?.name;
  const value = name ? run?.values.find((v) => v.name === name) : undefined;
  return value?.line ?? state.pass.line;
}

function render(): void {
  const frame = frames[cursor] ?? null;
  const state = run && frame ? stateAt(run, frame) : null;
  const mode = run?.mode ?? currentMode();

  if (state && run) {
    if (!graphView || graphView.pass !== state.pass) {
      graphView = renderGraph(els.graph, state.pass, run);
      zoom.attach(graphView.svg, graphView.width, graphView.height);
    }
    updateGraph(graphView, state);
    // Keep the node being run in view (at the start of a pass: the root).
    zoom.follow(graphView.nodes.get(state.step?.node ?? state.graph.root)?.g ?? null);
    const where = state.pass.line != null ? ` · line ${state.pass.line}` : "";
    els.graphCaption.textContent = `${state.pass.call}${where} · ${mode === "topo" ? "topological sort" : "ready queue"}`;
    editor.markActive(activeLine(state));
  } else {
    graphView = null;
    zoom.detach();
    fill(els.graph, empty(run ? "No backward graph: the snippet did not reach backward()." : "Run a snippet to see its backward graph."));
    els.graphCaption.textContent = "";
    editor.markActive(null);
  }

  renderQueue(els.queue, state, mode);
  renderDeps(els.deps, state);
  renderBuffers(els.buffers, state);
  renderSaved(els.saved, state);
  renderLeafGrads(els.leafgrads, state, run);
  renderLog(els.log, run, frame);

  const label = positionLabel(frame);
  controls.update({ cursor, count: frames.length, label });
  els.announce.textContent = frame?.error
    ? `${run?.passes[frame.pass].error?.type}: ${run?.passes[frame.pass].error?.message}`
    : state?.step?.text ?? label;

  const body = document.body.dataset;
  body.step = String(frame ? frame.applied - 1 : -1);
  body.pass = String(frame ? frame.pass : -1);
  body.frame = String(cursor);
  body.frames = String(frames.length);
  body.stepError = frame?.error ? "1" : "0";
}

// ---- buttons ----------------------------------------------------------------------------
els.run.addEventListener("click", () => void runSource());
// PyTorch's sequence counter keeps growing from one graph to the next: the new graph's nodes
// get the numbers after the last run's (Run and the other buttons start again at 0).
els.newforward.addEventListener("click", () => void runSource({ sequenceStart: run?.next_sequence_nr ?? 0 }));
els.mode.addEventListener("change", () => void runSource());
els.retain.addEventListener("change", () => {
  editor.setText(setRetainGraph(editor.getText(), els.retain.checked));
  void runSource({ showLastPass: true });
});
els.again.addEventListener("click", () => {
  const source = editor.getText();
  const target = lastBackwardTarget(source, run);
  if (!target) {
    renderErrors(els.error, [
      { error: { type: "Nothing to repeat", message: "The snippet has no .backward() call.", line: null, col: null }, where: null, line: null },
    ]);
    return;
  }
  editor.setText(`${source.replace(/\s+$/, "")}\n${target}.backward()\n`);
  void runSource({ showLastPass: true });
});

let presets: Preset[] = [];
els.preset.addEventListener("change", () => {
  const preset = presets.find((p) => p.id === els.preset.value);
  if (!preset) return;
  editor.setText(preset.source);
  void runSource();
});

// ---- the PyTorch check, the profiler, and the figure pages -------------------------------------
createComparePanel($("compare"), $("compare-run") as HTMLButtonElement, () => editor.getText());
createProfilePanel($("profile"), $("profile-run") as HTMLButtonElement, $("profile-download") as HTMLButtonElement, () => editor.getText());
buildMenu($("menu"));
startRouter($("menu"), [$("lab-page"), $("lab-tools")], $("figure-page"));

// ---- start ----------------------------------------------------------------------------------
async function init(): Promise<void> {
  render();
  const [presetResult] = await Promise.allSettled([fetchPresets(), loadGraphviz()]);
  if (presetResult.status === "fulfilled") {
    presets = presetResult.value;
    fill(
      els.preset,
      presets.map((p) => {
        const option = document.createElement("option");
        option.value = p.id;
        option.textContent = p.title;
        return option;
      }),
    );
    if (presets.length) {
      editor.setText(presets[0].source);
      await runSource();
    }
  } else {
    const reason = presetResult.reason;
    failure =
      reason instanceof ApiFailure ? reason.error : { type: "Error", message: String(reason), line: null, col: null };
    renderErrors(els.error, collectErrors(null, failure));
  }
  document.body.dataset.ready = "1";
}

void init();
