// `recording` blocks: the same code on real PyTorch and on gradwalk, as two tables, PyTorch's
// above gradwalk's, each as wide as the column (side by side, each got half and hid its seq and
// gradient columns). Each side names its engine, version and whether it was recorded
// live when the lesson was computed or shipped with the lesson.

import { h } from "../dom";
import { className, seqText, seqTitle } from "../panels/names";
import type { RenderedBlock } from "./context";
import type { RecordingBlock, RecordingSide } from "./types";

type Cell = { text: string; title?: string | null };
type Column = { head: string; cell: (row: Record<string, unknown>) => Cell; cls?: string };

function text(v: unknown): string {
  if (v == null) return "—";
  if (Array.isArray(v)) return v.map(text).join(", ");
  return String(v);
}

/** A node or event name: the class name (`AccumulateGrad`), the full C++ name in the tooltip. */
function nameCell(v: unknown, indent = 0): Cell {
  const full = text(v);
  const short = className(full);
  return { text: `${"\u2003".repeat(indent)}${short}`, title: short !== full ? full : null };
}

/** 2**64 − 1 (an AccumulateGrad's sequence number) arrives as a JSON integer that a JavaScript
 *  number cannot hold (it parses as 2**64): written 2⁶⁴−1, the exact value in the tooltip. A
 *  null is a row without one ("—"). */
function seqCell(v: unknown): Cell {
  return { text: seqText(v, "—"), title: seqTitle(v, false) };
}

const COLUMNS: Record<RecordingBlock["kind"], Column[]> = {
  "hook-order": [
    { head: "step", cell: (r) => ({ text: text(r.step) }), cls: "num" },
    { head: "node", cell: (r) => nameCell(r.node), cls: "node" },
    { head: "seq", cell: (r) => seqCell(r.seq), cls: "num seq" },
    { head: "gradient received", cell: (r) => ({ text: text(r.grad) }), cls: "num grad" },
  ],
  profile: [
    { head: "event", cell: (r) => nameCell(r.name, Number(r.depth) || 0), cls: "node" },
    { head: "phase", cell: (r) => ({ text: text(r.phase) }) },
    { head: "seq", cell: (r) => seqCell(r.seq), cls: "num seq" },
    { head: "backward node", cell: (r) => nameCell(r.node) },
  ],
};

function sourceText(side: RecordingSide): string {
  return side.source === "live" ? "recorded live" : "shipped recording (PyTorch not installed here)";
}

function sideTable(name: string, side: RecordingSide, kind: RecordingBlock["kind"]): HTMLElement {
  const columns = COLUMNS[kind] ?? COLUMNS["hook-order"];
  return h(
    "div",
    { class: "recording-side", "data-engine": side.engine, "data-source": side.source },
    h("h4", {}, `${name} `, h("span", { class: "version" }, side.version), " ", h("span", { class: `source ${side.source}` }, `· ${sourceText(side)}`)),
    h(
      "div",
      { class: "table-box", tabindex: 0, role: "region", "aria-label": `${name} ${side.version}: ${kind}` },
      h(
        "table",
        { class: "recording-table" },
        h("thead", {}, h("tr", {}, ...columns.map((c) => h("th", { class: c.cls ?? null, scope: "col" }, c.head)))),
        h(
          "tbody",
          {},
          ...side.rows.map((row) =>
            h(
              "tr",
              { class: row.phase === "backward" ? "backward" : row.phase === "forward" ? "forward" : null },
              ...columns.map((c) => {
                const cell = c.cell(row);
                return h("td", { class: c.cls ?? null, title: cell.title ?? null }, cell.text);
              }),
            ),
          ),
        ),
      ),
    ),
  );
}

export function renderRecording(block: RecordingBlock): RenderedBlock {
  const code = h(
    "div",
    { class: "recording-code" },
    h("p", { class: "listing-label" }, "The code both engines ran:"),
    h("pre", { class: "lesson-code", tabindex: 0, "aria-label": "The code both engines ran" }, h("code", { class: "language-python" }, block.code.replace(/\n$/, ""))),
  );
  return {
    el: h(
      "section",
      { class: "lesson-block recording card", "data-block": block.id, "data-kind": block.kind, "aria-label": block.title },
      h("h3", { class: "block-title" }, block.title),
      code,
      h("div", { class: "recording-sides" }, sideTable("PyTorch", block.pytorch, block.kind), sideTable("gradwalk", block.gradwalk, block.kind)),
    ),
  };
}
