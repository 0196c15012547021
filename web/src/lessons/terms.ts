// Glossary terms in the text: <span class="term" data-term="leaf">leaves</span> from the server.
// Each becomes focusable (tabindex=0) and is described (aria-describedby) by a tooltip holding
// the glossary's meaning, shown on hover and on keyboard focus; Escape closes it.

import { h } from "../dom";
import { typeset } from "./math";
import type { GlossaryEntry } from "./types";

let tips = 0;

export type Glossary = Map<string, GlossaryEntry>;

export function glossaryMap(entries: GlossaryEntry[]): Glossary {
  return new Map(entries.map((e) => [e.term, e]));
}

/** Place a fixed tooltip under (or above) its term, inside the viewport. */
function place(term: HTMLElement, tip: HTMLElement): void {
  const margin = 8;
  const box = term.getBoundingClientRect();
  const width = Math.min(320, window.innerWidth - 2 * margin);
  tip.style.width = `${width}px`;
  const left = Math.max(margin, Math.min(box.left, window.innerWidth - width - margin));
  tip.style.left = `${left}px`;
  const below = box.bottom + 6;
  tip.style.top = `${below}px`;
  const height = tip.getBoundingClientRect().height;
  if (below + height > window.innerHeight - margin && box.top - height - 6 > margin) tip.style.top = `${box.top - height - 6}px`;
}

export function wireTerms(root: ParentNode, glossary: Glossary): void {
  for (const term of root.querySelectorAll<HTMLElement>("span.term")) {
    if (term.dataset.wired) continue;
    term.dataset.wired = "1";
    const entry = glossary.get(term.dataset.term ?? "");
    const id = `term-tip-${++tips}`;
    const tip = h("span", { class: "term-tip", role: "tooltip", id, hidden: true });
    if (entry) {
      tip.append(h("strong", { class: "term-tip-name" }, entry.term), " ");
      const meaning = h("span", { class: "term-tip-meaning" });
      meaning.innerHTML = entry.html; // the server's own rendering of the glossary's Markdown
      for (const inner of meaning.querySelectorAll("span.term")) inner.classList.add("plain");
      typeset(meaning);
      tip.append(meaning);
    } else {
      tip.textContent = `${term.dataset.term ?? term.textContent}: not in this lesson's glossary`;
    }
    term.tabIndex = 0;
    term.setAttribute("aria-describedby", id);
    term.after(tip);

    let hover = false;
    let focus = false;
    const update = () => {
      const show = hover || focus;
      if (show === !tip.hidden) return;
      tip.hidden = !show;
      term.classList.toggle("open", show);
      if (show) place(term, tip);
    };
    term.addEventListener("mouseenter", () => ((hover = true), update()));
    term.addEventListener("mouseleave", () => ((hover = false), update()));
    term.addEventListener("focus", () => ((focus = true), update()));
    term.addEventListener("blur", () => ((focus = false), update()));
    term.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && !tip.hidden) {
        hover = false;
        focus = false;
        update();
        e.stopPropagation();
      }
    });
  }
}

/** Keep open tooltips beside their terms while the page scrolls (they are position: fixed). */
export function followTips(root: ParentNode): void {
  for (const tip of root.querySelectorAll<HTMLElement>(".term-tip:not([hidden])")) {
    const term = tip.previousElementSibling;
    if (term instanceof HTMLElement) place(term, tip);
  }
}
