// Ready queue panel: the tasks waiting to run, in the order they will be popped. In micrograd's
// order (mode "topo") there is no queue: the panel lists the nodes still to run, in the
// topological order sorted once at the start, with what has been summed into each so far.

import { empty, fill, h } from "../dom";
import { term } from "../guide";
import { formatTensor, fullTensor } from "../tensor";
import type { PassState } from "../timeline";
import type { Mode } from "../types";
import { isMaxSeq, MAX_SEQ_FULL, nodeName, seqLabel, seqTitle } from "./names";

export function renderQueue(el: HTMLElement, state: PassState | null, mode: Mode): void {
  const topo = mode === "topo";
  const caption = topo
    ? h("p", { class: "caption" }, "micrograd has no ready queue: these nodes are still to run, in the topological order it sorted once at the start. A gradient shown is what has arrived so far.")
    : h("p", { class: "caption" }, "Pop order: highest sequence number first; ", term("AccumulateGrad"), " (", term("seq 2⁶⁴−1"), ") goes first.");
  if (!state) return fill(el, empty("No pass to show."));
  if (!state.ready.length) return fill(el, caption, empty(topo ? "Nothing left: backward is done." : "Empty: backward is done."));
  const items = state.ready.map((entry, i) => {
    const grad = state.nodeGrad.get(entry.node);
    const text = grad ? grad.map((t) => formatTensor(t)).join(", ") : null;
    return h(
      "li",
      { "data-node": entry.node, "data-seq": isMaxSeq(entry.seq) ? MAX_SEQ_FULL : entry.seq, class: i === 0 ? "next" : null },
      h("span", { class: "name" }, nodeName(state.graph, entry.node)),
      " ",
      h("span", { class: "badge seq", title: seqTitle(entry.seq) }, seqLabel(entry.seq)),
      text ? " " : null,
      text
        ? h("span", { class: "grad num", title: `${topo ? "summed so far" : "its input buffer (complete)"}: ${grad!.map(fullTensor).join("; ")}` }, topo ? `so far ${text}` : text)
        : topo
          ? h("span", { class: "muted" }, " nothing yet")
          : null,
      i === 0 ? h("span", { class: "badge next-badge" }, "next") : null,
    );
  });
  const total = state.step && "ready_total" in state.step ? Number((state.step as { ready_total?: number }).ready_total) : state.ready.length;
  fill(
    el,
    caption,
    h("ol", { class: "queue-list" }, items),
    total > state.ready.length ? h("p", { class: "caption" }, `… and ${total - state.ready.length} more`) : null,
  );
}
