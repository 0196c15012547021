// `recording` blocks: the same code on real PyTorch and on gradwalk, as two tables side by side
// (stacked on narrow screens). Each side names its engine, version and whether it was recorded
// live when the lesson was computed or shipped with the lesson.

import { h } from "../dom";
import type { RenderedBlock } from "./context";
import type { RecordingBlock, RecordingSide } from "./types";

type Column = { head: string; cell: (row: Record<string, unknown>) => string; cls?: string };

/** 2**64 - 1 (an AccumulateGrad's sequence number) arrives as a JSON integer that a JavaScript
 *  number cannot hold: it parses as 2**64 exactly, so it is written back as UINT64_MAX. */
const UINT64_MAX = 2 ** 64;

function text(v: unknown): string {
  if (v == null) return "—";
  if (v === UINT64_MAX) return "18446744073709551615";
  if (Array.isArray(v)) return v.map(text).join(", ");
  return String(v);
}

const COLUMNS: Record<RecordingBlock["kind"], Column[]> = {
  "hook-order": [
    { head: "step", cell: (r) => text(r.step), cls: "num" },
    { head: "node", cell: (r) => text(r.node), cls: "node" },
    { head: "seq", cell: (r) => text(r.seq), cls: "num" },
    { head: "gradient received", cell: (r) => text(r.grad), cls: "num grad" },
  ],
  profile: [
    { head: "event", cell: (r) => `${"\u2003".repeat(Number(r.depth) || 0)}${text(r.name)}`, cls: "node" },
    { head: "phase", cell: (r) => text(r.phase) },
    { head: "seq", cell: (r) => text(r.seq), cls: "num" },
    { head: "backward node", cell: (r) => text(r.node) },
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
              ...columns.map((c) => h("td", { class: c.cls ?? null }, c.cell(row))),
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
