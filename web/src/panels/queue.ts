// Ready queue panel: the tasks waiting to run, in the order they will be popped.

import { empty, fill, h } from "../dom";
import { formatTensor } from "../tensor";
import type { PassState } from "../timeline";
import type { Mode } from "../types";
import { nodeName, seqLabel } from "./names";

export function renderQueue(el: HTMLElement, state: PassState | null, mode: Mode): void {
  const caption =
    mode === "topo"
      ? "Nodes left in the topological order, next first."
      : "Pop order: highest sequence number first; AccumulateGrad (seq max) goes first.";
  if (!state) return fill(el, empty("No pass to show."));
  if (!state.ready.length) return fill(el, h("p", { class: "caption" }, caption), empty("Empty: backward is done."));
  const items = state.ready.map((entry, i) => {
    const grad = state.nodeGrad.get(entry.node);
    return h(
      "li",
      { "data-node": entry.node, "data-seq": entry.seq ?? "max", class: i === 0 ? "next" : null },
      h("span", { class: "name" }, nodeName(state.graph, entry.node)),
      " ",
      h("span", { class: "badge seq" }, seqLabel(entry.seq)),
      grad ? " " : null,
      grad ? h("span", { class: "grad num", title: "its input buffer" }, grad.map((t) => formatTensor(t)).join(", ")) : null,
    );
  });
  fill(el, h("p", { class: "caption" }, caption), h("ol", { class: "queue-list" }, items));
}
