// `cards` blocks: flip cards. The front is the lazy description, the back what it actually
// means. The Flip button (or a click on the card) turns it; once turned both sides stay
// readable. Kept in progress: {flipped}.

import { h } from "../dom";
import { uniqueId, type BlockContext, type RenderedBlock } from "./context";
import { rich } from "./prose";
import type { CardsBlock } from "./types";

type Saved = { flipped: boolean };

export function renderCards(block: CardsBlock, ctx: BlockContext): RenderedBlock {
  const list = h("ul", { class: "flip-cards" });
  const el = h(
    "section",
    { class: "lesson-block cards card", "data-block": block.id, "aria-label": "Flip cards" },
    h("h3", { class: "block-title" }, "Flip cards"),
    h("p", { class: "hint" }, "Each card says something people often say. Flip it to see what is actually true."),
    list,
  );
  const flipped = (id: string) => ctx.progress.get<Saved>(block.id, id)?.flipped === true;

  const draw = () => {
    list.replaceChildren(
      ...block.cards.map((card) => {
        const backId = uniqueId("card-back");
        const frontId = uniqueId("card-front");
        const button = h("button", { type: "button", class: "flip", "aria-pressed": "false", "aria-controls": backId, "aria-describedby": frontId }, "Flip");
        const front = h("div", { class: "card-face card-front", id: frontId }, h("span", { class: "face-label" }, "What people say"), rich("div", card.front_html, ctx.glossary, { class: "face-text" }));
        const back = h("div", { class: "card-face card-back", id: backId }, h("span", { class: "face-label" }, "What it actually means"), rich("div", card.back_html, ctx.glossary, { class: "face-text" }));
        const item = h("li", { class: "flip-card", "data-card": card.id }, front, back, h("div", { class: "card-actions" }, button));
        const show = (on: boolean) => {
          item.classList.toggle("flipped", on);
          item.dataset.flipped = on ? "1" : "0";
          back.hidden = !on;
          button.setAttribute("aria-pressed", String(on));
          button.textContent = on ? "Flip back" : "Flip";
        };
        const flip = () => {
          const on = !flipped(card.id);
          if (on) ctx.progress.set(block.id, card.id, { flipped: true } satisfies Saved);
          else ctx.progress.remove(block.id, card.id);
          ctx.changed();
          show(on);
        };
        button.addEventListener("click", flip);
        // a click anywhere on the card turns it too (but not a click meant for a term or a link)
        item.addEventListener("click", (e) => {
          const target = e.target as Element;
          if (target.closest("button, a, .term")) return;
          flip();
        });
        show(flipped(card.id));
        return item;
      }),
    );
  };
  draw();
  return { el, reload: draw, count: () => [block.cards.filter((c) => flipped(c.id)).length, block.cards.length] };
}
