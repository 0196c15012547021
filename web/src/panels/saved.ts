// Saved tensors panel: what each node kept for its formula, and which have been freed
// (release_variables runs right after the node's formula unless retain_graph=True).

import { empty, fill, h } from "../dom";
import { formatTensor, fullTensor } from "../tensor";
import type { PassState } from "../timeline";
import { term } from "../guide";
import { nodeName } from "./names";

export function renderSaved(el: HTMLElement, state: PassState | null): void {
  if (!state) return fill(el, empty("No pass to show."));
  const holders = state.graph.nodes.filter((n) => n.saved.length > 0);
  if (!holders.length) return fill(el, empty("No node saved anything."));
  const items = holders.map((node) =>
    h(
      "li",
      { "data-node": node.id },
      h("span", { class: "name" }, nodeName(state.graph, node.id)),
      h(
        "ul",
        { class: "saved-list" },
        node.saved.map((s) => {
          const key = `${node.id}/${s.name}`;
          const freed = state.freed.has(key);
          const now = state.releasedNow.has(key);
          return h(
            "li",
            {
              "data-saved": s.name,
              "data-freed": freed ? "1" : "0",
              class: [freed ? "freed" : "", now ? "released-now" : ""].join(" ").trim() || null,
            },
            h("span", { class: "saved-name" }, s.name),
            " = ",
            h("span", { class: "fwd num", title: s.value ? fullTensor(s.value) : null }, s.value ? formatTensor(s.value) : "…"),
            freed ? h("span", { class: "badge freed-badge" }, now ? "freed now" : "freed") : null,
          );
        }),
      ),
    ),
  );
  fill(el, h("p", { class: "caption" }, "Kept for the backward formula; ", term("freed"), " after the node runs."), h("ul", { class: "plain" }, items));
}
