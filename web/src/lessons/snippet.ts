// `snippet` blocks (and an exercise's snippet): a small editor with Run. Run POSTs /api/run
// (the lab's engine) and shows what was printed, the error (marked on its line), each leaf's
// .grad, and a compact stepper: the backward graph (graph.ts) stepped with Step / Back / Reset
// over the frames of timeline.ts, with the step record's one-line text as the caption.
// "Open in the lab" opens the full lab with the code.

import { ApiFailure, runSnippet } from "../api";
import { h } from "../dom";
import { createEditor } from "../editor";
import { loadGraphviz, renderGraph, updateGraph, type GraphView } from "../graph";
import { collectErrors, renderErrors } from "../panels/error";
import { labAddress } from "../router";
import { formatTensor } from "../tensor";
import { buildFrames, stateAt, type Frame } from "../timeline";
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

function frameCaption(run: RunResponse, frame: Frame): string {
  const pass = run.passes[frame.pass];
  if (frame.error && pass.error) return `${pass.error.type}: ${pass.error.message}`;
  if (frame.applied === 0) return `Before the first step of ${pass.call}: the root's node waits in the ready queue with the seed gradient. Press Step.`;
  return pass.steps[frame.applied - 1].text;
}

export function embedSnippet(o: SnippetOptions): EmbeddedSnippet {
  const editorBox = h("div", { class: "snippet-editor" });
  const runButton = h("button", { type: "button", class: "primary snippet-run" }, "Run");
  const stepsButton = h("button", { type: "button", class: "snippet-steps", "aria-expanded": "false", disabled: true }, "Step through backward()");
  const openLab = h("a", { class: "snippet-lab", href: labAddress(o.code) }, "Open in the lab");
  const errorBox = h("div", { class: "snippet-error", role: "alert", hidden: true });
  const output = h("pre", { class: "snippet-output", tabindex: 0, "aria-label": "Printed output" });
  const grads = h("div", { class: "snippet-grads table-box" });
  const result = h("div", { class: "snippet-result", hidden: true }, h("div", { class: "snippet-printed" }, h("h4", {}, "Printed"), output), h("div", {}, h("h4", {}, "Leaves' ", h("code", {}, ".grad")), grads));

  const reset = h("button", { type: "button", class: "stepper-reset" }, "Reset");
  const back = h("button", { type: "button", class: "stepper-back" }, "Back");
  const step = h("button", { type: "button", class: "primary stepper-step" }, "Step");
  const position = h("span", { class: "stepper-position" });
  const caption = h("p", { class: "stepper-caption", "aria-live": "polite" });
  const graphBox = h("div", { class: "lesson-graph", tabindex: 0, role: "region", "aria-label": "Backward graph (scrolls when wider than its box)" });
  const stepper = h(
    "div",
    { class: "snippet-stepper", hidden: true },
    h("div", { class: "stepper-buttons", role: "toolbar", "aria-label": "Step through backward()" }, reset, back, step, position),
    caption,
    graphBox,
  );

  const el = h(
    "section",
    { class: "lesson-snippet card", "data-block": o.id, "data-runs": "0", "aria-label": o.label ?? (o.title ? `Snippet: ${o.title}` : "Snippet") },
    o.title ? h("h3", { class: "block-title" }, o.title) : null,
    editorBox,
    h("div", { class: "snippet-actions" }, runButton, stepsButton, openLab, h("span", { class: "hint" }, h("kbd", {}, "Ctrl"), "+", h("kbd", {}, "Enter"), " runs")),
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

  const editor = createEditor(editorBox, o.code.replace(/\n$/, ""), () => void go());

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
    position.textContent = frameLabel(run, frame);
    caption.textContent = frameCaption(run, frame);
    back.setAttribute("aria-disabled", String(cursor === 0));
    reset.setAttribute("aria-disabled", String(cursor === 0));
    step.setAttribute("aria-disabled", String(cursor >= frames.length - 1));
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
    stepsButton.textContent = open ? "Hide the steps" : "Step through backward()";
    if (open) draw();
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
    try {
      response = await runSnippet(editor.getText(), "pytorch");
      await loadGraphviz();
    } catch (e) {
      failure = e instanceof ApiFailure ? e.error : { type: "Error", message: String(e), line: null, col: null };
    }
    if (!alive || mine !== request) return;
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
    // "failed": the lab could not answer (network, a 5xx); "error": the snippet's own error
    const broken = failure != null && (failure.type === "NetworkError" || failure.type.startsWith("HTTP ") || failure.type === "InternalError");
    el.dataset.state = broken ? "failed" : errors.length ? "error" : "ok";
    el.dataset.errorType = errors[0]?.error.type ?? "";
    el.dataset.runs = String(Number(el.dataset.runs ?? "0") + 1);
    el.dataset.busy = "0";
    runButton.setAttribute("aria-busy", "false");
  }

  runButton.addEventListener("click", () => void go());
  stepsButton.addEventListener("click", () => openStepper(stepper.hidden));
  reset.addEventListener("click", () => move(0));
  back.addEventListener("click", () => move(cursor - 1));
  step.addEventListener("click", () => move(cursor + 1));
  const refreshLink = () => (openLab.href = labAddress(editor.getText()));
  for (const event of ["click", "focus", "mouseenter"]) openLab.addEventListener(event, refreshLink);

  return {
    el,
    destroy() {
      alive = false;
    },
  };
}
