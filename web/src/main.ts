// The lab page: wires the API client, the editor, the controls, the graph and the panels.
// Data flow: POST /api/run → RunResponse → frames (timeline.ts) → the frame at `cursor`
// → PassState → every panel renders from it.

import "./style.css";
import { ApiFailure, fetchPresets, runSnippet } from "./api";
import { createControls } from "./controls";
import { fill, empty } from "./dom";
import { createEditor } from "./editor";
import { addPanelHelp, createGuide } from "./guide";
import { loadGraphviz, renderGraph, updateGraph, type GraphView } from "./graph";
import { startSite } from "./lessons/site";
import type { LabRoute } from "./router";
import { createZoom } from "./zoom";
import { renderBuffers } from "./panels/buffers";
import { createComparePanel } from "./panels/compare";
import { createProfilePanel } from "./panels/profile";
import { renderDeps } from "./panels/deps";
import { collectErrors, renderErrors } from "./panels/error";
import { renderLeafGrads } from "./panels/leafgrads";
import { renderLog } from "./panels/log";
import { nodeById, nodeName } from "./panels/names";
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
  orderNote: $("order-note"),
  legendReady: $("legend-ready"),
};

// ---- page state -------------------------------------------------------------------------
let run: RunResponse | null = null;
let failure: ApiError | null = null;
let frames: Frame[] = [];
let cursor = 0;
let graphView: GraphView | null = null;
let latestRequest = 0;
let runsDone = 0;
/** forward+backward passes run before this one, .grad kept ("New forward pass"; 0 for Run) */
let earlierPasses = 0;
/** in micrograd's order: PyTorch's order of the same snippet, to mark where the two differ */
let pytorchOrder: { label: string; nodes: string[][]; names: string[][] } | null = null;

const zoom = createZoom(els.graph, {
  fit: $("zoom-fit") as HTMLButtonElement,
  actual: $("zoom-actual") as HTMLButtonElement,
  zoomIn: $("zoom-in") as HTMLButtonElement,
  zoomOut: $("zoom-out") as HTMLButtonElement,
  readout: $("zoom-level"),
  follow: $("zoom-follow") as HTMLButtonElement,
  overview: $("overview"),
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
 *  `sequenceStart`: where the sequence numbers start (0 unless "New forward pass");
 *  `earlier`: how many forward+backward passes of the snippet ran before (.grad kept). */
async function runSource(options: { showLastPass?: boolean; sequenceStart?: number; earlier?: number } = {}): Promise<void> {
  const source = editor.getText();
  const sequenceStart = options.sequenceStart ?? 0;
  const earlier = options.earlier ?? 0;
  const request = ++latestRequest;
  controls.stopPlay();
  compare.sourceChanged(source);
  profile.sourceChanged(source);
  setBusy(true);
  let response: RunResponse | null = null;
  let error: ApiError | null = null;
  let other: RunResponse | null = null;
  try {
    const mode = currentMode();
    const [mine, theirs] = await Promise.all([
      runSnippet(source, mode, sequenceStart, earlier),
      // micrograd's order is shown beside PyTorch's: where the two orders differ
      mode === "topo" ? runSnippet(source, "pytorch", sequenceStart, earlier).catch(() => null) : Promise.resolve(null),
    ]);
    response = mine;
    other = theirs;
  } catch (e) {
    error =
      e instanceof ApiFailure ? e.error : { type: "Error", message: String(e), line: null, col: null };
  }
  if (request !== latestRequest) return; // a newer run has started; drop this answer
  run = response;
  failure = error;
  earlierPasses = run ? earlier : 0;
  pytorchOrder = other
    ? {
        label: "PyTorch",
        nodes: other.passes.map((p) => p.steps.map((st) => st.node)),
        names: other.passes.map((p) => p.steps.map((st) => nodeName(p.graph, st.node))),
      }
    : null;
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
  const marked = errors.find((e) => e.line != null);
  editor.markError(marked?.line ?? null, marked ? `${marked.error.type}: ${marked.error.message}` : "", marked?.error.col ?? null);
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
  if (!run) {
    if (!failure) return "No run yet";
    if (failure.status != null && failure.status < 500) return failure.line != null ? `Not run: ${failure.type} at line ${failure.line}` : `Not run: ${failure.type}`;
    return "The lab could not answer";
  }
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
    zoom.refresh();
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
  renderLeafGrads(els.leafgrads, state, run, earlierPasses);
  renderLog(els.log, run, frame, mode === "topo" ? pytorchOrder : null);
  renderOrderNote(mode);

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

/** In micrograd's order: where it first parts from PyTorch's ready queue (same gradients). */
function renderOrderNote(mode: Mode): void {
  els.legendReady.textContent = mode === "topo" ? "still to run (topological order)" : "in ready queue";
  const note = els.orderNote;
  if (mode !== "topo" || !run || !pytorchOrder) {
    note.hidden = true;
    return;
  }
  const parts: string[] = [];
  run.passes.forEach((pass, p) => {
    const theirs = pytorchOrder!.nodes[p] ?? [];
    const k = pass.steps.findIndex((st, i) => theirs[i] !== st.node);
    if (k < 0) return;
    const where = run!.passes.length > 1 ? `pass ${p + 1}, ` : "";
    parts.push(`${where}step ${k + 1}: micrograd runs ${nodeName(pass.graph, pass.steps[k].node)}, PyTorch's ready queue runs ${pytorchOrder!.names[p][k] ?? "nothing"}`);
  });
  note.hidden = false;
  note.textContent = parts.length
    ? `micrograd's order differs from PyTorch's from ${parts.join("; ")}. Steps run in another order are marked in the step log; the gradients are the same.`
    : "micrograd's topological order runs the nodes in the same order as PyTorch's ready queue for this snippet.";
  note.dataset.differs = parts.length ? "1" : "0";
}

// ---- buttons ----------------------------------------------------------------------------
els.run.addEventListener("click", () => void runSource());
// PyTorch's sequence counter keeps growing from one graph to the next: the new graph's nodes
// get the numbers after the last run's, and the leaves keep their .grad, which this pass adds
// into (Run and the other buttons start again at 0, .grad None).
els.newforward.addEventListener("click", () =>
  void runSource({ sequenceStart: run?.next_sequence_nr ?? 0, earlier: run ? earlierPasses + 1 : 0 }),
);
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
const compare = createComparePanel($("compare"), $("compare-run") as HTMLButtonElement, () => editor.getText());
const profile = createProfilePanel($("profile"), $("profile-run") as HTMLButtonElement, $("profile-download") as HTMLButtonElement, () => editor.getText());

// ---- first steps: the guide and a "?" on every panel --------------------------------------------
addPanelHelp();
createGuide($("lab-page"), $("guide-open") as HTMLButtonElement);
// On a wide screen the lab fills the window below the header (whose height the menu sets), so
// the ready queue's head and the leaf .grad panel are in view without scrolling.
function measureHeader(): void {
  const top = $("lab-page").getBoundingClientRect().top + window.scrollY;
  if (top > 0) document.documentElement.style.setProperty("--lab-top", `${Math.round(top)}px`);
}
window.addEventListener("resize", measureHeader);
new ResizeObserver(measureHeader).observe($("menu"));

// ---- routes (router.ts, lessons/site.ts): the start page, the lessons, the figures, the lab --------
// /lab?preset=<id> and /lab#code=<base64url> open the lab with that code; before the presets
// have loaded, the request waits for init().
let pendingLabRoute: LabRoute | null = null;
function routeSource(route: LabRoute): string | null {
  if (route.code != null) return route.code;
  const preset = presets.find((p) => p.id === route.preset);
  if (preset) els.preset.value = preset.id;
  return preset?.source ?? null;
}
function openLabRoute(route: LabRoute): void {
  if (document.body.dataset.ready !== "1") {
    pendingLabRoute = route;
    return;
  }
  const source = routeSource(route);
  if (source != null && source !== editor.getText()) {
    editor.setText(source);
    void runSource();
  }
}
startSite({
  nav: $("menu"),
  lab: [$("lab-page"), $("lab-tools")],
  start: $("start-page"),
  lesson: $("lesson-page"),
  figure: $("figure-page"),
  onLab: openLabRoute,
});

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
      const wanted = pendingLabRoute ? routeSource(pendingLabRoute) : null; // routes: a preloaded lab
      pendingLabRoute = null;
      editor.setText(wanted ?? presets[0].source);
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
