// `code` blocks (code shown, not run) and `listing` blocks (code with what it printed when the
// lesson was computed). Both scroll sideways inside their own box on narrow screens.

import { h } from "../dom";
import type { RenderedBlock } from "./context";
import type { CodeBlock, ListingBlock } from "./types";

function codeBox(code: string, language: string | null, label: string): HTMLElement {
  return h(
    "pre",
    { class: "lesson-code", tabindex: 0, "aria-label": label, "data-language": language ?? null },
    h("code", { class: language ? `language-${language}` : null }, code.replace(/\n$/, "")),
  );
}

export function renderCode(block: CodeBlock): RenderedBlock {
  return { el: h("div", { class: "lesson-block code-block", "data-block": block.id }, codeBox(block.code, block.language, `Code (${block.language ?? "text"})`)) };
}

export function renderListing(block: ListingBlock): RenderedBlock {
  return {
    el: h(
      "figure",
      { class: "lesson-block listing", "data-block": block.id },
      codeBox(block.code, block.language, "Code listing"),
      h("figcaption", { class: "listing-label" }, "It prints:"),
      h("pre", { class: "lesson-output", tabindex: 0, "aria-label": "What the listing printed" }, block.output.replace(/\n$/, "") || "(nothing)"),
    ),
  };
}
