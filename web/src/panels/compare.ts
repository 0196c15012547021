// "Check against PyTorch": POST /api/compare runs the editor's snippet on gradwalk and on real
// PyTorch (a pre-hook on every node) and this panel shows both engines' order, sequence
// numbers and gradients side by side, each difference highlighted. When the server has no
// torch, it shows how to install it instead.

import { ApiFailure } from "../api";
import { empty, fill, h } from "../dom";
import { formatTensor } from "../tensor";
import type { ApiError, Tensor } from "../types";
import { className, seqText, seqTitle } from "./names";

interface CompareNode {
  name: string;
  seq: number | null; // null for AccumulateGrad (2**64 − 1)
  grad_in: (Tensor | null)[];
}
interface CompareRow {
  step: number;
  gradwalk: CompareNode | null;
  torch: CompareNode | null;
  differs: string[]; // "missing", "name", "seq", "grad"
}
interface CompareGrad {
  name: string;
  gradwalk: Tensor | null;
  torch: Tensor | null;
  differs: boolean;
}
interface CompareErrors {
  gradwalk: ApiError | null;
  torch: ApiError | null;
  differs: boolean;
}
interface ComparePass {
  index: number;
  call: string;
  line: number | null;
  rows: CompareRow[];
  grads: CompareGrad[];
  error: CompareErrors;
}
export interface CompareResponse {
  available: boolean;
  install: string | null;
  torch_version: string | null;
  gradwalk_version: string;
  same: boolean;
  differences: number;
  passes: ComparePass[];
  error: CompareErrors;
}

function nodeCell(node: CompareNode | null, differs: string[]): HTMLElement[] {
  if (!node) return [h("td", { class: "missing", colspan: 3 }, "— (no such step)")];
  const seq = seqText(node.seq);
  return [
    h("td", { class: differs.includes("name") ? "diff name" : "name", title: node.name }, className(node.name)),
    h("td", { class: differs.includes("seq") ? "diff num" : "num", title: seqTitle(node.seq) }, seq),
    h("td", { class: differs.includes("grad") ? "diff grad num" : "grad num" }, node.grad_in.map((g) => (g ? formatTensor(g) : "None")).join(", ")),
  ];
}

function errorLine(errors: CompareErrors): HTMLElement | null {
  if (!errors.gradwalk && !errors.torch) return null;
  const describe = (e: ApiError | null) => (e ? `${e.type}: ${e.message}` : "no error");
  return h(
    "div",
    { class: errors.differs ? "compare-error diff" : "compare-error" },
    h("div", {}, h("strong", {}, "gradwalk: "), describe(errors.gradwalk)),
    h("div", {}, h("strong", {}, "PyTorch: "), describe(errors.torch)),
  );
}

function renderPass(p: ComparePass): HTMLElement {
  const rows = p.rows.map((r) =>
    h(
      "tr",
      { class: r.differs.length ? "differs" : "", "data-differs": r.differs.join(" ") || null },
      h("td", { class: "num" }, String(r.step + 1)),
      ...nodeCell(r.gradwalk, r.differs),
      ...nodeCell(r.torch, r.differs),
      h("td", { class: "verdict" }, r.differs.length ? `✗ ${r.differs.join(", ")}` : "✓"),
    ),
  );
  const grads = p.grads.map((g) =>
    h(
      "tr",
      { class: g.differs ? "differs" : "" },
      h("td", { class: "name" }, `${g.name}.grad`),
      h("td", { class: g.differs ? "diff grad num" : "grad num" }, g.gradwalk ? formatTensor(g.gradwalk) : "None"),
      h("td", { class: g.differs ? "diff grad num" : "grad num" }, g.torch ? formatTensor(g.torch) : "None"),
      h("td", { class: "verdict" }, g.differs ? "✗" : "✓"),
    ),
  );
  return h(
    "div",
    { class: "compare-pass", "data-pass": p.index },
    h("h3", {}, `Pass ${p.index + 1}: `, h("code", {}, p.call), p.line != null ? ` (line ${p.line})` : ""),
    h(
      "div",
      { class: "table-scroll" },
      h(
        "table",
        { class: "compare-table" },
        h(
          "thead",
          {},
          h("tr", {}, h("th", {}), h("th", { colspan: 3 }, "gradwalk"), h("th", { colspan: 3 }, "PyTorch"), h("th", {})),
          h("tr", {}, h("th", { class: "num" }, "#"), h("th", {}, "node"), h("th", { class: "num" }, "seq"), h("th", { class: "num" }, "gradient in"), h("th", {}, "node"), h("th", { class: "num" }, "seq"), h("th", { class: "num" }, "gradient in"), h("th", {}, "")),
        ),
        h("tbody", {}, ...rows),
      ),
    ),
    grads.length
      ? h("table", { class: "compare-grads" }, h("thead", {}, h("tr", {}, h("th", {}, "leaf"), h("th", { class: "num" }, "gradwalk"), h("th", { class: "num" }, "PyTorch"), h("th", {}, ""))), h("tbody", {}, ...grads))
      : null,
    errorLine(p.error),
  );
}

export function renderCompare(el: HTMLElement, r: CompareResponse): void {
  el.dataset.differences = String(r.available ? r.differences : -1);
  el.dataset.available = r.available ? "1" : "0";
  if (!r.available) {
    fill(
      el,
      h(
        "div",
        { class: "install" },
        h("p", {}, "PyTorch is not installed on the server, so there is nothing to compare with. Install the CPU build and restart the lab:"),
        h("pre", {}, r.install ?? "pip install torch==2.13.0"),
      ),
    );
    return;
  }
  const summary = r.same
    ? h("p", { class: "verdict-line same" }, `✓ No difference: every node, sequence number and gradient matches PyTorch ${r.torch_version}.`)
    : h("p", { class: "verdict-line differs" }, `✗ ${r.differences} difference${r.differences === 1 ? "" : "s"} from PyTorch ${r.torch_version}, highlighted below.`);
  fill(el, summary, r.passes.length ? r.passes.map(renderPass) : empty("The snippet never called backward()."), errorLine(r.error));
}

export interface ToolPanel {
  /** The editor's snippet is now `source`: a result for another snippet is cleared. */
  sourceChanged(source: string): void;
}

const COMPARE_EMPTY = "Press “Run on both engines” to check the snippet against real PyTorch.";

export function createComparePanel(el: HTMLElement, button: HTMLButtonElement, getSource: () => string): ToolPanel {
  let request = 0;
  let shownFor: string | null = null; // the snippet the panel's result is for
  button.addEventListener("click", async () => {
    const mine = ++request;
    const source = getSource();
    button.setAttribute("aria-busy", "true");
    try {
      const response = await fetch("/api/compare", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ source }),
      });
      const body = await response.json();
      if (!response.ok) {
        const e = body?.error;
        const where = e?.line != null ? ` (line ${e.line}${e.col != null ? `, col ${e.col}` : ""})` : "";
        throw new ApiFailure({ type: e?.type ?? `HTTP ${response.status}`, message: `${e?.type ?? "Error"}${where}: ${e?.message ?? body?.detail ?? ""}`, line: null, col: null });
      }
      if (mine === request) renderCompare(el, body as CompareResponse);
    } catch (e) {
      if (mine === request) fill(el, h("p", { class: "compare-error" }, e instanceof Error ? e.message : String(e)));
    } finally {
      if (mine === request) shownFor = source;
      button.setAttribute("aria-busy", "false");
      el.dataset.runs = String(Number(el.dataset.runs ?? "0") + 1);
    }
  });
  return {
    sourceChanged(source) {
      if (shownFor === null || shownFor === source) return;
      request++; // an answer still on its way is for the old snippet: drop it
      shownFor = null;
      delete el.dataset.differences;
      fill(el, empty(COMPARE_EMPTY));
    },
  };
}
