// `exercise` blocks: a problem, its worked answer one click away, and (when it has one) a
// snippet that checks the answer on the engine. Kept in progress: {open} once the answer was
// shown.

import { h } from "../dom";
import { uniqueId, type BlockContext, type RenderedBlock } from "./context";
import { plainRich, rich } from "./prose";
import { embedSnippet } from "./snippet";
import type { ExerciseBlock } from "./types";

type Saved = { open: boolean };

export function renderExercise(block: ExerciseBlock, ctx: BlockContext): RenderedBlock {
  const answerId = uniqueId("worked");
  const toggle = h("button", { type: "button", class: "show-answer", "aria-expanded": "false", "aria-controls": answerId }, "Show worked answer");
  const answer = h("div", { class: "worked-answer", id: answerId, hidden: true }, h("h4", {}, "Worked answer"), rich("div", block.answer_html, ctx.glossary, { class: "answer-text" }));
  const el = h(
    "section",
    { class: "lesson-block exercise card", "data-block": block.id, "aria-label": `Exercise: ${block.title}` },
    h("h3", { class: "block-title" }, h("span", { class: "kicker" }, "Exercise · "), block.title_html ? plainRich(block.title_html) : block.title),
    rich("div", block.problem_html, ctx.glossary, { class: "problem" }),
    h("div", { class: "exercise-actions" }, toggle),
    answer,
  );
  if (block.snippet) {
    const snippet = embedSnippet({ id: `${block.id}-snippet`, code: block.snippet, title: "Check it on the engine", step: false, label: `Check it on the engine: ${block.title}` });
    snippet.el.classList.add("exercise-snippet");
    el.append(snippet.el);
    ctx.onTeardown(() => snippet.destroy());
  }
  const isOpen = () => ctx.progress.get<Saved>(block.id, "answer")?.open === true;
  const show = (open: boolean) => {
    answer.hidden = !open;
    toggle.setAttribute("aria-expanded", String(open));
    toggle.textContent = open ? "Hide worked answer" : "Show worked answer";
    el.dataset.open = open ? "1" : "0";
  };
  toggle.addEventListener("click", () => {
    const open = answer.hidden;
    if (open) ctx.progress.set(block.id, "answer", { open: true } satisfies Saved);
    else ctx.progress.remove(block.id, "answer");
    ctx.changed();
    show(open);
  });
  show(isOpen());
  return { el, reload: () => show(isOpen()), count: () => [isOpen() ? 1 : 0, 1] };
}
