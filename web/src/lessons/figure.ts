// `figure` blocks: one of the lab's figure pages (figures/*.ts) mounted inline with the block's
// starting params, its caption, and a link to its full page. The figure's element ids are
// made unique to the block, so several figures (and the figure pages) can share the page.

import { h } from "../dom";
import { figureById } from "../figures/index";
import type { BlockContext, RenderedBlock } from "./context";
import { rich } from "./prose";
import type { FigureBlock } from "./types";

/** Prefix every id inside `root` and the references to them (for=, aria-*). */
function scopeIds(root: HTMLElement, prefix: string): void {
  const renamed = new Map<string, string>();
  for (const el of root.querySelectorAll<HTMLElement>("[id]")) {
    const id = `${prefix}-${el.id}`;
    renamed.set(el.id, id);
    el.id = id;
  }
  for (const attr of ["for", "aria-labelledby", "aria-describedby", "aria-controls"]) {
    for (const el of root.querySelectorAll<HTMLElement>(`[${attr}]`)) {
      const value = el.getAttribute(attr) ?? "";
      el.setAttribute(attr, value.split(/\s+/).map((v) => renamed.get(v) ?? v).join(" "));
    }
  }
}

export function renderFigure(block: FigureBlock, ctx: BlockContext): RenderedBlock {
  const page = figureById(block.figure);
  const root = h("div", { class: "figure embedded", "data-figure": block.figure });
  const link = h("a", { href: `/figures/${block.figure}`, class: "figure-link" }, page ? `Open “${page.title}” on its own page` : "Open the figure's page");
  const caption = h("figcaption", { class: "figure-caption" });
  if (block.caption_html) caption.append(rich("div", block.caption_html, ctx.glossary, { class: "caption-text" }));
  caption.append(link);
  const el = h(
    "figure",
    { class: "lesson-block lesson-figure", "data-block": block.id, "data-figure": block.figure },
    page ? h("p", { class: "figure-name" }, page.title) : null,
    root,
    caption,
  );
  if (!page) {
    root.append(h("p", { class: "figure-error", role: "alert" }, `This lesson asks for a figure named “${block.figure}”, which the lab does not have.`));
    return { el };
  }
  const teardown = page.mount(root, block.params ?? {});
  scopeIds(root, `fig-${block.id}`);
  ctx.onTeardown(teardown);
  return { el };
}
