// Which lesson uses each figure, and a sentence or two of teaching for the figure's own page:
// the question it answers and what to try. One small table; frame() (common.ts) puts it at the
// top of a figure's full page (/figures/<id>), with a link back to the lesson. A figure embedded
// in a lesson shows none of it: the lesson's own text introduces it there.

import { h } from "../dom";

export interface FigureTeaching {
  lesson: string; // the lesson's id: /lessons/<id>
  lessonTitle: string;
  question: string;
  tryThis: string;
}

const CHAIN = { lesson: "chain-rule", lessonTitle: "The chain rule and the graph" };
const AUTODIFF = { lesson: "autodiff", lessonTitle: "How autodiff works" };

export const FIGURE_LESSONS: Record<string, FigureTeaching> = {
  "chain-rule": {
    ...CHAIN,
    question: "Why is the slope of f(g(x)) the inner slope times the outer slope?",
    tryThis: "Drag the dot along the curve: the three tangent lines turn together, and gradwalk's backward() agrees with the finite difference at every x. Then pick another inner or outer function.",
  },
  "dead-relu": {
    ...CHAIN,
    question: "What happens to every gradient behind a ReLU whose input is negative?",
    tryThis: "Slide b below −6 and watch all three leaf gradients drop to exactly 0 at once: relu's local slope is 0 there, and the chain rule multiplies by it.",
  },
  "forward-mode": {
    ...CHAIN,
    question: "Can the derivative ride along with the values, instead of going backward?",
    tryThis: "Press Next line to carry (value, derivative) through one line at a time; the last derivative equals reverse mode's x.grad. Move x and check again.",
  },
  "paths-sum": {
    ...CHAIN,
    question: "x is used twice: how do its two gradients combine?",
    tryThis: "Step backward and watch x.grad collect one contribution per path with +=. Then tick the = bug and see x keep only the last path.",
  },
  "gradient-check": {
    ...CHAIN,
    question: "How far can a finite difference be trusted, and which step h is best?",
    tryThis: "Move h from right to left: the error falls (truncation) until cancellation takes over. Compare the one-sided and the central difference.",
  },
  xor: {
    ...CHAIN,
    question: "Can a few tanh units and gradient descent learn XOR, which no straight line separates?",
    tryThis: "Train, then change the learning rate or the starting weights: the loss curve and the decision boundary change, the gradients are gradwalk's backward() every step.",
  },
  activation: {
    ...AUTODIFF,
    question: "What number does backward multiply by at an activation, and what do many of them do to a gradient?",
    tryThis: "Move the input to see the local slope, then raise the number of layers: with sigmoid the gradient shrinks layer after layer (vanishing gradients); with relu it does not.",
  },
  "learning-rate": {
    ...AUTODIFF,
    question: "Exact gradients, yet training diverges: how?",
    tryThis: "Raise the learning rate past the critical rate: the loss climbs instead of falling, while every gradient still equals the closed form.",
  },
};

/** The teaching box of a figure's page: its question, what to try, the lesson that uses it. */
export function teachingBox(figure: string): HTMLElement | null {
  const t = FIGURE_LESSONS[figure];
  if (!t) return null;
  return h(
    "aside",
    { class: "figure-teach", "aria-label": "About this figure" },
    h("p", { class: "figure-question" }, h("strong", {}, "The question: "), t.question),
    h("p", {}, h("strong", {}, "Try this: "), t.tryThis),
    h("p", { class: "figure-lesson" }, "Used in the lesson ", h("a", { href: `/lessons/${t.lesson}`, "data-lesson": t.lesson }, t.lessonTitle), "."),
  );
}
