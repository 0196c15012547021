// Leaf gradients panel: each leaf's value and its .grad, which AccumulateGrad adds into.

import { empty, fill, h } from "../dom";
import { formatTensor } from "../tensor";
import type { PassState } from "../timeline";
import type { RunResponse } from "../types";
import { cell, fitTable } from "./table";

export function renderLeafGrads(el: HTMLElement, state: PassState | null, run: RunResponse | null): void {
  if (!run || !run.leaves.length) return fill(el, empty("No leaves."));
  const rows = run.leaves.map((leaf) => {
    const grad = state ? (state.leafGrads.get(leaf.name) ?? null) : leaf.grad;
    const now = state?.writtenNow.has(leaf.name) ?? false;
    return h(
      "tr",
      { "data-leaf": leaf.name, class: now ? "changed" : null },
      cell(leaf.name, "name"),
      cell(formatTensor(leaf.value), "fwd num wrap"),
      cell(formatTensor(grad, { digits: 6 }), grad ? "grad num wrap" : "muted num wrap"),
    );
  });
  fill(
    el,
    fitTable(
      [
        { head: "leaf", width: "22%" },
        { head: "value", width: "36%", class: "num" },
        { head: ".grad", class: "num" },
      ],
      rows,
    ),
  );
}
