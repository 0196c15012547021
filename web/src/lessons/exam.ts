// `exam` blocks: the student writes an answer, reveals the model answer and marks themselves:
// "I got it" (full marks), "Partly" (half), "Not yet" (none). The block's total counts the
// marks given out of all its questions' marks. Kept in progress: {answer, revealed, mark}.

import { h } from "../dom";
import { uniqueId, type BlockContext, type RenderedBlock } from "./context";
import { examTotal, formatMarks, marksLine, type Mark } from "./progress";
import { rich } from "./prose";
import type { ExamBlock } from "./types";

type Saved = { answer?: string; revealed?: boolean; mark?: Mark | null };

const MARKS: [Mark, string][] = [
  ["full", "I got it"],
  ["half", "Partly"],
  ["zero", "Not yet"],
];

export function renderExam(block: ExamBlock, ctx: BlockContext): RenderedBlock {
  const total = h("p", { class: "exam-total", "aria-live": "polite" });
  const list = h("ol", { class: "exam-questions" });
  const el = h(
    "section",
    { class: "lesson-block exam card", "data-block": block.id, "aria-label": "Exam questions" },
    h("h3", { class: "block-title" }, "Exam questions"),
    h("p", { class: "hint" }, "Write your answer, then reveal the model answer and mark yourself."),
    list,
    total,
  );
  const saved = (q: string): Saved => ctx.progress.get<Saved>(block.id, q) ?? {};
  const save = (q: string, change: Saved) => {
    ctx.progress.set(block.id, q, { ...saved(q), ...change });
    ctx.changed();
  };
  const updateTotal = () => {
    const t = examTotal(block.questions, (q) => saved(q).mark ?? null);
    total.textContent = marksLine(t);
    el.dataset.got = String(t.got);
    el.dataset.total = String(t.total);
  };

  const draw = () => {
    list.replaceChildren(
      ...block.questions.map((q) => {
        const state = saved(q.id);
        const qid = uniqueId("exam-q");
        const taId = uniqueId("exam-answer");
        const answerId = uniqueId("exam-model");
        const textarea = h("textarea", { id: taId, rows: 4, class: "exam-answer" });
        textarea.value = state.answer ?? "";
        textarea.addEventListener("input", () => save(q.id, { answer: textarea.value }));
        const reveal = h("button", { type: "button", class: "reveal", "aria-expanded": String(!!state.revealed), "aria-controls": answerId }, state.revealed ? "Hide model answer" : "Show model answer");
        const model = h("div", { class: "model-answer", id: answerId, hidden: !state.revealed });
        const markButtons = MARKS.map(([mark, label]) => {
          const b = h("button", { type: "button", class: `mark mark-${mark}`, "data-mark": mark, "aria-pressed": String(state.mark === mark) }, label);
          b.addEventListener("click", () => {
            save(q.id, { mark: saved(q.id).mark === mark ? null : mark });
            for (const other of markButtons) other.setAttribute("aria-pressed", String(saved(q.id).mark === other.dataset.mark));
            updateTotal();
          });
          return b;
        });
        model.append(
          h("h4", {}, "Model answer"),
          rich("div", q.answer_html, ctx.glossary, { class: "answer-text" }),
          h("div", { class: "mark-buttons", role: "group", "aria-label": `Mark yourself (${formatMarks(q.marks)} mark${q.marks === 1 ? "" : "s"})` }, h("span", { class: "mark-label" }, "Mark yourself:"), ...markButtons),
        );
        reveal.addEventListener("click", () => {
          const open = model.hidden;
          model.hidden = !open;
          reveal.setAttribute("aria-expanded", String(open));
          reveal.textContent = open ? "Hide model answer" : "Show model answer";
          save(q.id, { revealed: open });
        });
        return h(
          "li",
          { class: "exam-question", "data-question": q.id, "data-marks": q.marks },
          h("div", { class: "question-row" }, rich("div", q.question_html, ctx.glossary, { class: "question", id: qid }), h("span", { class: "marks" }, `${formatMarks(q.marks)} mark${q.marks === 1 ? "" : "s"}`)),
          h("label", { for: taId, class: "answer-label" }, "Your answer"),
          textarea,
          h("div", { class: "exam-actions" }, reveal),
          model,
        );
      }),
    );
    updateTotal();
  };
  draw();
  return {
    el,
    reload: draw,
    count: () => [block.questions.filter((q) => saved(q.id).mark != null).length, block.questions.length],
  };
}
