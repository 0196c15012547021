// Leaf gradients panel: each leaf's value and its .grad, which AccumulateGrad adds into.

import { empty, fill, h } from "../dom";
import { formatTensor } from "../tensor";
import type { PassState } from "../timeline";
import type { RunResponse } from "../types";

export function renderLeafGrads(el: HTMLElement, state: PassState | null, run: RunResponse | null): void {
  if (!run || !run.leaves.length) return fill(el, empty("No leaves."));
  const rows = run.leaves.map((leaf) => {
    const grad = state ? (state.leafGrads.get(leaf.name) ?? null) : leaf.grad;
    const now = state?.writtenNow.has(leaf.name) ?? false;
    return h(
      "tr",
      { "data-leaf": leaf.name, class: now ? "changed" : null },
      h("td", { class: "name" }, leaf.name),
      h("td", { class: "fwd num" }, formatTensor(leaf.value)),
      h("td", { class: grad ? "grad num" : "muted num" }, formatTensor(grad, { digits: 6 })),
    );
  });
  fill(
    el,
    h(
      "table",
      {},
      h("thead", {}, h("tr", {}, h("th", {}, "leaf"), h("th", {}, "value"), h("th", {}, ".grad"))),
      h("tbody", {}, rows),
    ),
  );
}
