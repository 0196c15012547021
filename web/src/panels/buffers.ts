// Input buffers panel: gradients that have arrived at a node that is still waiting for more.

import { empty, fill, h } from "../dom";
import { term } from "../guide";
import { formatTensor, fullTensor } from "../tensor";
import type { PassState } from "../timeline";
import { nodeName } from "./names";

export function renderBuffers(el: HTMLElement, state: PassState | null): void {
  if (!state) return fill(el, empty("No pass to show."));
  const caption = h("p", { class: "caption" }, "A waiting node's ", term("input buffer"), ": gradients that arrived, summed per slot.");
  if (!state.buffers.length) return fill(el, caption, empty("None: no node holds part of its gradients."));
  const items = state.buffers.map((buffer) =>
    h(
      "li",
      { "data-node": buffer.node },
      h("span", { class: "name" }, nodeName(state.graph, buffer.node)),
      " ",
      h(
        "span",
        { class: "slots" },
        buffer.slots.map((slot, i) =>
          h("span", { class: slot ? "slot grad num" : "slot muted", title: `slot ${i}: ${fullTensor(slot)}` }, formatTensor(slot)),
        ),
      ),
    ),
  );
  fill(el, caption, h("ul", { class: "plain" }, items));
}
