// Dependencies panel: for each node, how many gradients it still waits for (compute_dependencies,
// then one fewer per arrival). A node becomes ready when its count reaches 0.

import { empty, fill, h } from "../dom";
import type { PassState } from "../timeline";
import { term } from "../guide";
import { nodeName, seqText, seqTitle } from "./names";
import { cell, fitTable } from "./table";

function seqCell(seq: number | null): HTMLElement {
  const td = cell(seqText(seq), "muted num");
  const full = seqTitle(seq);
  if (full) td.title = full;
  return td;
}

export function renderDeps(el: HTMLElement, state: PassState | null): void {
  if (!state) return fill(el, empty("No pass to show."));
  const changed = new Map(state.dependencyChanges.map((d) => [d.node, d]));
  const rows = state.graph.nodes.map((node) => {
    const count = state.dependencies.get(node.id) ?? 0;
    const change = changed.get(node.id);
    return h(
      "tr",
      {
        "data-node": node.id,
        "data-count": count,
        class: [change ? "changed" : "", `st-${state.status.get(node.id)}`].join(" ").trim(),
      },
      cell(nodeName(state.graph, node.id)),
      seqCell(node.seq),
      cell(change ? `${change.before} → ${change.after}` : String(count), "num"),
    );
  });
  fill(
    el,
    fitTable(
      [
        { head: "node" },
        { head: "seq", width: "3.6em", class: "num", title: "sequence number (2⁶⁴−1 for AccumulateGrad)" },
        { head: term("waits"), width: "4.4em", class: "num", title: "how many gradients the node still waits for" },
      ],
      rows,
    ),
  );
}
