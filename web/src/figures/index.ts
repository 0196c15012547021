// The figure pages, the menu, and mounting a figure's full page (/figures/<id>). Routing itself
// is router.ts; the lessons embed the same pages inline (lessons/figure.ts).

import { h } from "../dom";
import type { LessonSummary } from "../lessons/types";
import { activation } from "./activation";
import { chainRule } from "./chainRule";
import type { FigurePage } from "./common";
import { deadRelu } from "./deadRelu";
import { forwardMode } from "./forwardMode";
import { gradientCheck } from "./gradientCheck";
import { learningRate } from "./learningRate";
import { pathsSum } from "./pathsSum";
import { xor } from "./xor";

export const FIGURE_PAGES: FigurePage[] = [chainRule, activation, gradientCheck, learningRate, xor, pathsSum, forwardMode, deadRelu];

export function figureById(id: string): FigurePage | null {
  return FIGURE_PAGES.find((p) => p.id === id) ?? null;
}

/** The menu: Start, the lessons in order, the lab, then one link per figure. Each link's
 *  data-route is the key router.ts shows it under (routeKey). */
export function buildMenu(nav: HTMLElement, lessons: LessonSummary[]): void {
  nav.replaceChildren(
    h("a", { href: "/", "data-route": "start", "data-kind": "start" }, "Start"),
    ...(lessons.length ? [h("span", { class: "menu-label", "aria-hidden": "true" }, "Lessons")] : []),
    ...lessons.map((l, i) => h("a", { href: `/lessons/${l.id}`, "data-route": `lessons/${l.id}`, "data-kind": "lesson", title: l.title }, `${i + 1}. ${l.title}`)),
    h("a", { href: "/lab", "data-route": "lab", "data-kind": "lab" }, "Lab"),
    h("span", { class: "menu-label", "aria-hidden": "true" }, "Figures"),
    ...FIGURE_PAGES.map((p, i) => h("a", { href: `/figures/${p.id}`, "data-route": p.id, "data-kind": "figure" }, `${i + 1}. ${p.title}`)),
  );
}

/** A figure's full page inside `container`; returns its teardown. */
export function mountFigurePage(container: HTMLElement, page: FigurePage): () => void {
  const root = h("div", { class: "figure", id: "figure", "data-figure": page.id });
  container.replaceChildren(h("header", { class: "figure-head" }, h("h2", {}, page.title), h("p", { class: "lede" }, page.lede)), root);
  return page.mount(root);
}
