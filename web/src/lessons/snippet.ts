// `snippet` blocks (and an exercise's snippet): a small editor with Run. Run POSTs /api/run
// (the lab's engine) and shows what was printed, the error (marked on its line), each leaf's
// .grad, and a compact stepper: the backward graph (graph.ts) stepped with Step / Back / Reset
// over the frames of timeline.ts, with the step record's one-line text as the caption and, under
// it, the engine's state at that step: the ready queue, the dependency counts and the input
// buffers. "Step through backward()" (and, for a `step` snippet, Step itself) works before Run:
// it runs the snippet first. "Open in the lab" opens the full lab with the code.
//
// When the lab is busy (a 503 past fetchRetrying's tries, a 5xx, no answer, or a time limit hit
// while the machine is loaded), the box says "busy, retrying…" and asks again, calmly; only the
// snippet's own errors are shown as errors.

import { ApiFailure, runSnippet } from "../api";
import { h } from "../dom";
import { createEditor } from "../editor";
import { loadGraphviz, renderGraph, updateGraph, type GraphView } from "../graph";
import { collectErrors, renderErrors } from "../panels/error";
import { nodeName, seqLabel, seqTitle } from "../panels/names";
import { labAddress } from "../router";
import { BUSY_TRIES, busyDelay, isBusy } from "./busy";
import { formatTensor } from "../tensor";
import { buildFrames, stateAt, type Frame, type PassState } from "../timeline";
import type { ApiError, RunResponse } from "../types";

export interface SnippetOptions {
  id: string;
  code: string;
  title: string | null;
  /** open the stepper after Run */
  step: boolean;
  /** the region's name, when the title alone is not unique (an exercise's snippet) */
  label?: string;
}

export interface EmbeddedSnippet {
  el: HTMLElement;
  destroy(): void;
}

function frameLabel(run: RunResponse, frame: Frame): string {
  const pass = run.passes[frame.pass];
  const head = run.passes.length > 1 ? `pass ${frame.pass + 1} of ${run.passes.length} · ` : "";
  if (frame.error) return `${head}stopped: ${pass.error?.type ?? "error"}`;
  return `${head}step ${frame.applied} of ${pass.steps.length}`;
}

/** The engine's state at a step, compactly: the ready queue (next first), the dependency
 *  counts (this step's changes marked) and the input buffers holding part of a gradient. */
function stateView(state: PassState): HTMLElement {
  const name = (id: string) => nodeName(state.graph, id);
  const queue = state.ready.length
    ? h(
        "ol",
        { class: "chips" },
        ...state.ready.map((r, i) =>
          h("li", { class: i === 0 ? "chip next" : "chip", "data-node": r.node, title: seqTitle(r.seq) }, name(r.node), " ", h("span", { class: "chip-seq" }, seqLabel(r.seq)), i === 0 ? h("span", { class: "chip-next" }, " next") : null),
        ),
      )
    : h("span", { class: "empty-state" }, "empty: backward is done");
  const changed = new Map(state.dependencyChanges.map((d) => [d.node, d]));
  const counted = state.graph.nodes.filter((n) => changed.has(n.id) || ((state.dependencies.get(n.id) ?? 0) > 0 && state.status.get(n.id) !== "done"));
  const deps = counted.length
    ? h(
        "ul",
        { class: "chips" },
        ...counted.map((n) => {
          const c = changed.get(n.id);
          const count = state.dependencies.get(n.id) ?? 0;
          return h("li", { class: c ? "chip changed" : "chip", "data-node": n.id, "data-count": count }, name(n.id), " ", h("span", { class: "chip-count" }, c ? `${c.before} → ${c.after}` : String(count)));
        }),
      )
    : h("span", { class: "empty-state" }, "no node waits for a gradient");
  const buffers = state.buffers.length
    ? h(
        "ul",
        { class: "chips" },
        ...state.buffers.map((b) => h("li", { class: "chip", "data-node": b.node }, name(b.node), " ", h("span", { class: "chip-grad" }, b.slots.map((t) => formatTensor(t)).join(", ")))),
      )
    : h("span", { class: "empty-state" }, "none holds part of a gradient");
  return h(
    "dl",
    { class: "stepper-state" },
    h("div", { "data-part": "queue" }, h("dt", {}, "Ready queue"), h("dd", {}, queue)),
    h("div", { "data-part": "deps" }, h("dt", {}, "Dependencies"), h("dd", {}, deps)),
    h("div", { "data-part": "buffers" }, h("dt", {}, "Input buffers"), h("dd", {}, buffers)),
  );
}

function frameCaption(run: RunResponse, frame: Frame): string {
  const pass = run.passes[frame.pass];
  if (frame.error && pass.error) return `${pass.error.type}: ${pass.error.message}`;
  if (frame.applied === 0) return `Before the first step of ${pass.call}: the root's node waits in the ready queue with the seed gradient. Press Step.`;
  return pass.steps[frame.applied - 1].text;
}

export function embedSnippet(o: SnippetOptions): EmbeddedSnippet {
  const editorBox = h("div", { class: "snippet-editor" });
  const runButton = h("button", { type: "button", class: "primary snippet-run" }, "Run");
  const stepsButton = h("button", { type: "button", class: "snippet-steps", "aria-expanded": "false" }, "Step through backward()");
  const openLab = h("a", { class: "snippet-lab", href: labAddress(o.code) }, "Open in the lab");
  const errorBox = h("div", { class: "snippet-error", role: "alert", hidden: true });
  const busyBox = h("p", { class: "snippet-busy", role: "status", hidden: true });
  const output = h("pre", { class: "snippet-output", tabindex: 0, "aria-label": "Printed output" });
  const grads = h("div", { class: "snippet-grads table-box" });
  const result = h("div", { class: "snippet-result", hidden: true }, h("div", { class: "snippet-printed" }, h("h4", {}, "Printed"), output), h("div", {}, h("h4", {}, "Leaves' ", h("code", {}, ".grad")), grads));

  const reset = h("button", { type: "button", class: "stepper-reset", "aria-disabled": "true" }, "Reset");
  const back = h("button", { type: "button", class: "stepper-back", "aria-disabled": "true" }, "Back");
  const step = h("button", { type: "button", class: "primary stepper-step" }, "Step");
  const position = h("span", { class: "stepper-position" });
  const caption = h("p", { class: "stepper-caption", "aria-live": "polite" }, o.step ? "Press Step to run the snippet and walk its backward pass one node at a time." : "");
  const stateBox = h("div", { class: "stepper-state-box" });
  const graphBox = h("div", { class: "lesson-graph", tabindex: 0, role: "region", "aria-label": "Backward graph (scrolls when wider than its box)" });
  const stepper = h(
    "div",
    { class: "snippet-stepper", hidden: true },
    h("div", { class: "stepper-buttons", role: "toolbar", "aria-label": "Step through backward()" }, reset, back, step, position),
    caption,
    stateBox,
    graphBox,
  );
  stepper.hidden = !o.step;

  const el = h(
    "section",
    { class: "lesson-snippet card", "data-block": o.id, "data-runs": "0", "aria-label": o.label ?? (o.title ? `Snippet: ${o.title}` : "Snippet") },
    o.title ? h("h3", { class: "block-title" }, o.title) : null,
    editorBox,
    h("div", { class: "snippet-actions" }, runButton, stepsButton, openLab, h("span", { class: "hint" }, h("kbd", {}, "Ctrl"), "+", h("kbd", {}, "Enter"), " runs")),
    busyBox,
    errorBox,
    result,
    stepper,
  );

  let run: RunResponse | null = null;
  let frames: Frame[] = [];
  let cursor = 0;
  let view: GraphView | null = null;
  let request = 0;
  let alive = true;

  const editor = createEditor(editorBox, o.code.replace(/\n$/, ""), () => void go(), { measureOffscreen: true });

  function draw(): void {
    if (!run || !frames.length) return;
    const frame = frames[cursor];
    const state = stateAt(run, frame);
    if (!view || view.pass !== state.pass) {
      view = renderGraph(graphBox, state.pass, run);
      // natural size, shrunk to the box down to 70% (below that the box scrolls)
      const room = graphBox.clientWidth - 8;
      const scale = room > 0 ? Math.max(0.7, Math.min(1, room / view.width)) : 1;
      view.svg.setAttribute("width", String(Math.round(view.width * scale)));
      view.svg.setAttribute("height", String(Math.round(view.height * scale)));
    }
    updateGraph(view, state);
    stateBox.replaceChildren(stateView(state));
    position.textContent = frameLabel(run, frame);
    caption.textContent = frameCaption(run, frame);
    back.setAttribute("aria-disabled", String(cursor === 0));
    reset.setAttribute("aria-disabled", String(cursor === 0));
    step.setAttribute("aria-disabled", String(run != null && cursor >= frames.length - 1));
    el.dataset.frame = String(cursor);
    el.dataset.frames = String(frames.length);
  }

  function move(to: number): void {
    if (!frames.length) return;
    cursor = Math.max(0, Math.min(frames.length - 1, to));
    draw();
  }

  function openStepper(open: boolean): void {
    stepper.hidden = !open;
    stepsButton.setAttribute("aria-expanded", String(open));
    stepsButton.textContent = open && run ? "Hide the steps" : "Step through backward()";
    if (open) draw();
  }

  /** Step / "Step through backward()" before any run: run first, then show the first frame. */
  async function runThenStep(): Promise<void> {
    if (el.dataset.busy === "1") return;
    await go();
    if (frames.length) openStepper(true);
  }

  function showLeaves(r: RunResponse): void {
    if (!r.leaves.length) {
      grads.replaceChildren(h("p", { class: "empty" }, "No leaves (no tensor with requires_grad=True)."));
      return;
    }
    grads.replaceChildren(
      h(
        "table",
        { class: "leaf-grads" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "leaf"), h("th", { scope: "col", class: "num" }, "value"), h("th", { scope: "col", class: "num" }, ".grad"))),
        h(
          "tbody",
          {},
          ...r.leaves.map((leaf) =>
            h("tr", { "data-leaf": leaf.name }, h("td", {}, leaf.name), h("td", { class: "num fwd" }, formatTensor(leaf.value)), h("td", { class: leaf.grad ? "num grad" : "num muted" }, formatTensor(leaf.grad, { digits: 6 }))),
          ),
        ),
      ),
    );
  }

  async function go(): Promise<void> {
    const mine = ++request;
    runButton.setAttribute("aria-busy", "true");
    el.dataset.busy = "1";
    let response: RunResponse | null = null;
    let failure: ApiError | null = null;
    for (let attempt = 1; ; attempt++) {
      response = null;
      failure = null;
      try {
        response = await runSnippet(editor.getText(), "pytorch");
        await loadGraphviz();
      } catch (e) {
        failure = e instanceof ApiFailure ? e.error : { type: "Error", message: String(e), line: null, col: null };
      }
      if (!alive || mine !== request) return;
      if (!failure || !isBusy(failure) || attempt >= BUSY_TRIES) break;
      // the lab is busy: say so calmly and ask again
      busyBox.hidden = false;
      busyBox.textContent = "The lab is busy, retrying…";
      el.dataset.retries = String(attempt);
      await new Promise((resolve) => setTimeout(resolve, busyDelay(attempt)));
      if (!alive || mine !== request) return;
    }
    busyBox.hidden = true;
    if (failure && isBusy(failure)) {
      // still busy after every try: no raw error, a calm line and the Run button
      busyBox.hidden = false;
      busyBox.textContent = "The lab is still busy. Press Run to try again in a moment.";
      busyBox.title = `${failure.type}: ${failure.message}`;
      el.dataset.state = "busy";
      el.dataset.errorType = failure.type;
      el.dataset.runs = String(Number(el.dataset.runs ?? "0") + 1);
      el.dataset.busy = "0";
      runButton.setAttribute("aria-busy", "false");
      return;
    }
    run = response;
    frames = run ? buildFrames(run) : [];
    cursor = 0;
    view = null;
    graphBox.replaceChildren();
    const errors = collectErrors(run, failure);
    renderErrors(errorBox, errors);
    editor.markError(errors.find((e) => e.line != null)?.line ?? null);
    result.hidden = !run;
    if (run) {
      // each printed chunk ends with its own newline, as print() wrote it
      output.textContent = run.prints.length ? run.prints.map((p) => p.replace(/\n$/, "")).join("\n") : "(nothing printed)";
      showLeaves(run);
    }
    stepsButton.disabled = !frames.length;
    if (!frames.length) openStepper(false);
    else if (o.step || !stepper.hidden) openStepper(true);
    stepsButton.title = frames.length ? "" : "This snippet has no backward() pass to step through";
    // "failed": the lab could not answer (network, a 5xx); "error": the snippet's own error
    const broken = failure != null && (failure.type === "NetworkError" || failure.type.startsWith("HTTP ") || failure.type === "InternalError");
    el.dataset.state = broken ? "failed" : errors.length ? "error" : "ok";
    el.dataset.errorType = errors[0]?.error.type ?? "";
    el.dataset.runs = String(Number(el.dataset.runs ?? "0") + 1);
    el.dataset.busy = "0";
    runButton.setAttribute("aria-busy", "false");
  }

  runButton.addEventListener("click", () => void go());
  stepsButton.addEventListener("click", () => {
    if (!run) void runThenStep();
    else openStepper(stepper.hidden);
  });
  reset.addEventListener("click", () => move(0));
  back.addEventListener("click", () => move(cursor - 1));
  step.addEventListener("click", () => {
    if (!run) void runThenStep();
    else move(cursor + 1);
  });
  const refreshLink = () => (openLab.href = labAddress(editor.getText()));
  for (const event of ["click", "focus", "mouseenter"]) openLab.addEventListener(event, refreshLink);

  return {
    el,
    destroy() {
      alive = false;
    },
  };
}
