// One renderer per block kind (docs/lessons-api.md, BLOCK): the page is generic and shows
// whatever the lesson's JSON holds.

import { h } from "../dom";
import { renderCards } from "./cards";
import { renderCode, renderListing } from "./code";
import type { BlockContext, RenderedBlock } from "./context";
import { renderExam } from "./exam";
import { renderExercise } from "./exercise";
import { renderFigure } from "./figure";
import { rich } from "./prose";
import { renderQuiz } from "./quiz";
import { renderRecording } from "./recording";
import { embedSnippet } from "./snippet";
import type { Block } from "./types";

export function renderBlock(block: Block, ctx: BlockContext): RenderedBlock {
  switch (block.type) {
    case "prose":
      return { el: rich("div", block.html, ctx.glossary, { class: "lesson-block prose", "data-block": block.id }) };
    case "figure":
      return renderFigure(block, ctx);
    case "snippet": {
      const snippet = embedSnippet({ id: block.id, code: block.code, title: block.title, step: block.step });
      snippet.el.classList.add("lesson-block");
      ctx.onTeardown(() => snippet.destroy());
      return { el: snippet.el };
    }
    case "listing":
      return renderListing(block);
    case "code":
      return renderCode(block);
    case "quiz":
      return renderQuiz(block, ctx);
    case "exam":
      return renderExam(block, ctx);
    case "cards":
      return renderCards(block, ctx);
    case "exercise":
      return renderExercise(block, ctx);
    case "recording":
      return renderRecording(block);
    default: {
      const unknown = block as { type?: string; id?: string };
      return { el: h("p", { class: "lesson-block unknown-block", "data-block": unknown.id ?? null }, `(This page does not know how to show a “${unknown.type}” block.)`) };
    }
  }
}
