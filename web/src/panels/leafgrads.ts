// Leaf .grad panel: each leaf's value, its .grad (the running total AccumulateGrad adds into,
// across backward() calls and forward passes) and what the pass shown added to it so far.

import { empty, fill, h } from "../dom";
import { formatTensor, fullTensor } from "../tensor";
import type { PassState } from "../timeline";
import type { RunResponse } from "../types";
import { cell, fitTable } from "./table";

function tensorCell(t: Parameters<typeof formatTensor>[0], cls: string, prefix = ""): HTMLTableCellElement {
  const td = cell(`${prefix}${formatTensor(t)}`, cls);
  td.title = fullTensor(t);
  return td;
}

/** `earlierPasses`: forward+backward passes run before this one (New forward pass). */
export function renderLeafGrads(el: HTMLElement, state: PassState | null, run: RunResponse | null, earlierPasses = 0): void {
  if (!run || !run.leaves.length) return fill(el, empty("No leaves."));
  const rows = run.leaves.map((leaf) => {
    const grad = state ? (state.leafGrads.get(leaf.name) ?? null) : leaf.grad;
    const now = state?.writtenNow.has(leaf.name) ?? false;
    // what this pass's AccumulateGrad(leaf) received, once it has run
    const node = state?.graph.nodes.find((n) => n.kind === "accumulate" && n.variable === leaf.name);
    const ran = node && state && (state.status.get(node.id) === "done" || state.status.get(node.id) === "current");
    const added = ran ? (state!.nodeGrad.get(node!.id)?.[0] ?? null) : null;
    return h(
      "tr",
      { "data-leaf": leaf.name, class: now ? "changed" : null },
      cell(leaf.name, "name"),
      tensorCell(leaf.value, "fwd num wrap"),
      tensorCell(grad, grad ? "grad num wrap total" : "muted num wrap total"),
      added ? tensorCell(added, "grad num wrap added") : cell(node ? "not yet" : "—", "muted num wrap added"),
    );
  });
  const note =
    earlierPasses > 0
      ? h("p", { class: "caption accumulating", "data-earlier": earlierPasses },
          `.grad includes ${earlierPasses} earlier forward+backward pass${earlierPasses === 1 ? "" : "es"}: AccumulateGrad adds (+=), as in PyTorch, until .grad is set to None or zero_grad() runs. Run starts from None again.`)
      : null;
  fill(
    el,
    note,
    fitTable(
      [
        { head: "leaf", width: "16%" },
        { head: "value", width: "26%", class: "num" },
        { head: ".grad", class: "num", title: "the running total" },
        { head: "this pass", width: "26%", class: "num", title: "what this pass's AccumulateGrad added" },
      ],
      rows,
    ),
  );
}
