// Step log panel: what each step did, in words (STEP.text from the server), up to the current frame.

import { empty, fill, h } from "../dom";
import { normalizeShapes } from "../tensor";
import type { Frame } from "../timeline";
import type { RunResponse } from "../types";

/** What the snippet printed, as one text: each print() chunk already ends with its own newline
 *  (docs/lab-api.md), so the chunks are joined as they are, without adding another. */
export function printedText(prints: string[]): string {
  return prints.join("").replace(/\n$/, "");
}

/** `otherOrder`: per pass, the node each step of the other engine's order runs (to mark where
 *  micrograd's order and PyTorch's differ), or null. */
export function renderLog(el: HTMLElement, run: RunResponse | null, frame: Frame | null, otherOrder: { label: string; nodes: string[][]; names: string[][] } | null = null): void {
  if (!run) return fill(el, empty("Nothing has run yet."));
  const items: HTMLElement[] = [];
  let current: HTMLElement | null = null;
  if (run.prints.length) {
    items.push(h("li", { class: "prints" }, h("span", { class: "muted" }, "print output"), h("pre", {}, printedText(run.prints))));
  }
  run.passes.forEach((pass, p) => {
    if (!frame || p > frame.pass) return;
    const where = pass.line != null ? ` (line ${pass.line})` : "";
    const head = h("li", { class: "pass", "data-pass": p }, `Pass ${p + 1}: `, h("code", {}, pass.call), where);
    items.push(head);
    const upTo = p < frame.pass ? pass.steps.length : frame.applied;
    if (p === frame.pass && upTo === 0 && !frame.error) current = head;
    pass.steps.slice(0, upTo).forEach((step) => {
      const other = otherOrder?.nodes[p]?.[step.index];
      const differs = other != null && other !== step.node;
      const li = h(
        "li",
        { class: differs ? "step differs" : "step", "data-pass": p, "data-index": step.index },
        h("span", { class: "badge" }, String(step.index)),
        " ",
        normalizeShapes(step.text),
        differs ? h("span", { class: "order-diff" }, ` (${otherOrder!.label} runs ${otherOrder!.names[p][step.index]} here)`) : null,
      );
      items.push(li);
      if (p === frame.pass && step.index === upTo - 1 && !frame.error) current = li;
    });
    if (pass.error && (p < frame.pass || frame.error)) {
      const li = h("li", { class: "error" }, `${pass.error.type}: ${pass.error.message}`);
      items.push(li);
      if (p === frame.pass) current = li;
    }
  });
  const cur = current as HTMLElement | null;
  if (cur) {
    cur.classList.add("current");
    cur.setAttribute("aria-current", "step");
  }
  fill(el, h("ol", { class: "log-list" }, items));
  if (cur) el.scrollTop = Math.max(0, cur.offsetTop - el.clientHeight + cur.offsetHeight + 8);
}
