// The figure pages and the hash routes that show them: #/figure/<id>. Any other hash shows
// the stepping lab. Each page is mounted fresh when its route is entered, torn down on leave.

import { h } from "../dom";
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

export function figureFromHash(hash: string): FigurePage | null {
  const match = /^#\/figure\/([\w-]+)$/.exec(hash);
  return match ? FIGURE_PAGES.find((p) => p.id === match[1]) ?? null : null;
}

/** The menu: the lab itself, then one link per figure. */
export function buildMenu(nav: HTMLElement): void {
  nav.replaceChildren(
    h("a", { href: "#/", "data-route": "lab" }, "Lab"),
    ...FIGURE_PAGES.map((p, i) => h("a", { href: `#/figure/${p.id}`, "data-route": p.id }, `${i + 1}. ${p.title}`)),
  );
}

/**
 * Shows the lab or a figure for the current hash. `labParts` are the lab's sections, kept
 * alive (hidden) while a figure is open so the lab's state survives a visit to a figure.
 */
export function startRouter(nav: HTMLElement, labParts: HTMLElement[], figurePage: HTMLElement): void {
  let teardown: (() => void) | null = null;
  const route = () => {
    teardown?.();
    teardown = null;
    const page = figureFromHash(location.hash);
    for (const part of labParts) part.hidden = page !== null;
    figurePage.hidden = page === null;
    for (const a of nav.querySelectorAll<HTMLAnchorElement>("a")) {
      const current = a.dataset.route === (page?.id ?? "lab");
      if (current) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    }
    document.body.dataset.route = page?.id ?? "lab";
    if (!page) {
      figurePage.replaceChildren();
      document.title = "gradwalk lab: step through loss.backward()";
      return;
    }
    document.title = `${page.title} · gradwalk lab`;
    const root = h("div", { class: "figure", id: "figure", "data-figure": page.id });
    figurePage.replaceChildren(h("header", { class: "figure-head" }, h("h2", {}, page.title), h("p", { class: "lede" }, page.lede)), root);
    teardown = page.mount(root);
  };
  window.addEventListener("hashchange", route);
  route();
}
