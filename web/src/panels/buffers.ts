// Input buffers panel: gradients that have arrived at a node that is still waiting for more.

import { empty, fill, h } from "../dom";
import { formatTensor } from "../tensor";
import type { PassState } from "../timeline";
import { nodeName } from "./names";

export function renderBuffers(el: HTMLElement, state: PassState | null): void {
  if (!state) return fill(el, empty("No pass to show."));
  if (!state.buffers.length) return fill(el, empty("None: no node holds part of its gradients."));
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
          h("span", { class: slot ? "slot grad num" : "slot muted", title: `slot ${i}` }, formatTensor(slot)),
        ),
      ),
    ),
  );
  fill(el, h("ul", { class: "plain" }, items));
}
