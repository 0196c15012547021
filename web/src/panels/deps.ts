// Dependencies panel: for each node, how many gradients it still waits for (compute_dependencies,
// then one fewer per arrival). A node becomes ready when its count reaches 0.

import { empty, fill, h } from "../dom";
import type { PassState } from "../timeline";
import { nodeName, seqLabel } from "./names";

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
      h("td", {}, nodeName(state.graph, node.id)),
      h("td", { class: "muted" }, seqLabel(node.seq)),
      h("td", { class: "num" }, change ? `${change.before} → ${change.after}` : String(count)),
    );
  });
  fill(
    el,
    h(
      "table",
      {},
      h("thead", {}, h("tr", {}, h("th", {}, "node"), h("th", {}, "seq"), h("th", { class: "num" }, "waits for"))),
      h("tbody", {}, rows),
    ),
  );
}
