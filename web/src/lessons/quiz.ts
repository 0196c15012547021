// `quiz` blocks: multiple choice. Choosing shows that choice's feedback and locks the question
// (it says so, and its own "Try this question again" unlocks it); the score line counts answered
// and correct questions; "Retry the quiz" clears the whole quiz. Answers are
// kept in progress (item: the question id, value: {choice}).

import { h } from "../dom";
import { uniqueId, type BlockContext, type RenderedBlock } from "./context";
import { quizScore, scoreLine } from "./progress";
import { enrich, rich } from "./prose";
import type { QuizBlock } from "./types";

type Saved = { choice: string };

/** A choice's HTML inside a button: a lone paragraph is unwrapped, terms stay plain text (no
 *  focusable element inside a button). */
function choiceContent(html: string): HTMLElement {
  const el = h("span", { class: "choice-text" });
  el.innerHTML = html.trim().replace(/^<p>([\s\S]*)<\/p>$/, "$1");
  for (const term of el.querySelectorAll("span.term")) term.classList.add("plain");
  enrich(el, new Map());
  return el;
}

export function renderQuiz(block: QuizBlock, ctx: BlockContext): RenderedBlock {
  const score = h("p", { class: "quiz-score", "aria-live": "polite" });
  const retry = h("button", { type: "button", class: "quiz-retry primary", hidden: true }, "Retry the quiz");
  const list = h("ol", { class: "quiz-questions" });
  const el = h(
    "section",
    { class: "lesson-block quiz card", "data-block": block.id, "aria-label": "Quiz" },
    h("h3", { class: "block-title" }, "Quiz"),
    list,
    h("div", { class: "quiz-foot" }, score, retry),
  );

  const chosen = (q: string) => ctx.progress.get<Saved>(block.id, q)?.choice ?? null;
  const updateScore = () => {
    const s = quizScore(block.questions, chosen);
    score.textContent = scoreLine(s);
    retry.hidden = s.answered === 0;
    el.dataset.answered = String(s.answered);
    el.dataset.correct = String(s.correct);
  };

  const draw = () => {
    list.replaceChildren(
      ...block.questions.map((q) => {
        const qid = uniqueId("quiz-q");
        const picked = chosen(q.id);
        const item = h("li", { class: "quiz-question", "data-question": q.id });
        const group = h("div", { role: "group", "aria-labelledby": qid });
        const question = rich("div", q.question_html, ctx.glossary, { class: "question", id: qid });
        const choices = h("ul", { class: "choices" });
        const feedback = h("div", { class: "quiz-feedback", "aria-live": "polite" });
        const again = h("button", { type: "button", class: "quiz-again", hidden: picked == null }, "Try this question again");
        const lockedNote = h("p", { class: "quiz-locked", hidden: picked == null }, "Answer locked: ", again, " or retry the whole quiz below.");
        again.addEventListener("click", () => {
          ctx.progress.remove(block.id, q.id);
          ctx.changed();
          draw();
          list.querySelector<HTMLElement>(`[data-question="${CSS.escape(q.id)}"] button.choice`)?.focus();
        });
        for (const c of q.choices) {
          const button = h("button", { type: "button", class: "choice", "data-choice": c.id, "data-correct": c.correct ? "true" : "false" }, choiceContent(c.html));
          const note = rich("div", c.feedback_html, ctx.glossary, { class: `choice-feedback ${c.correct ? "right" : "wrong"}`, "data-choice": c.id, hidden: true });
          note.prepend(h("strong", { class: "verdict" }, c.correct ? "Correct. " : "Not quite. "));
          if (picked != null) {
            button.setAttribute("aria-disabled", "true");
            button.setAttribute("aria-pressed", String(picked === c.id));
            if (picked === c.id) {
              button.classList.add(c.correct ? "chosen-right" : "chosen-wrong");
              note.hidden = false;
            }
            if (c.correct) button.classList.add("the-answer");
          } else button.setAttribute("aria-pressed", "false");
          button.addEventListener("click", () => {
            if (chosen(q.id) != null) return;
            ctx.progress.set(block.id, q.id, { choice: c.id } satisfies Saved);
            ctx.changed();
            draw();
            list.querySelector<HTMLElement>(`[data-question="${CSS.escape(q.id)}"] [data-choice="${CSS.escape(c.id)}"].choice`)?.focus();
          });
          choices.append(h("li", {}, button));
          feedback.append(note);
        }
        item.dataset.answered = picked != null ? "1" : "0";
        group.append(question, choices, feedback, lockedNote);
        item.append(group);
        return item;
      }),
    );
    updateScore();
  };

  retry.addEventListener("click", () => {
    ctx.progress.clear(block.id);
    ctx.changed();
    draw();
    list.querySelector<HTMLElement>("button.choice")?.focus();
  });
  draw();
  return {
    el,
    reload: draw,
    count: () => [quizScore(block.questions, chosen).answered, block.questions.length],
  };
}
