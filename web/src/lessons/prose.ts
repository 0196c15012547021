// The server's HTML (prose, question and answer text, captions) put into the page: KaTeX for
// the math, tooltips for the glossary terms. It is the server's own rendering of the lesson's
// Markdown (no raw HTML from a lesson file passes through), so it goes in as innerHTML.

import { h } from "../dom";
import { typeset } from "./math";
import { nameEmptyHeaders } from "./scrolls";
import { wireTerms, type Glossary } from "./terms";

export function enrich(el: HTMLElement, glossary: Glossary): HTMLElement {
  typeset(el);
  wireTerms(el, glossary);
  nameEmptyHeaders(el);
  return el;
}

/** An element holding `html`, typeset and with its terms wired. */
export function rich<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  html: string,
  glossary: Glossary,
  attrs: Record<string, string | number | boolean | null | undefined> = {},
): HTMLElementTagNameMap[K] {
  const el = h(tag, attrs);
  el.innerHTML = html;
  enrich(el, glossary);
  return el;
}

/** A heading's or a link's HTML: math typeset, terms left as plain text (nothing focusable
 *  inside a link). */
export function plainRich(html: string): DocumentFragment {
  const holder = h("span");
  holder.innerHTML = html;
  for (const term of holder.querySelectorAll("span.term")) term.classList.add("plain");
  typeset(holder);
  const fragment = document.createDocumentFragment();
  fragment.append(...holder.childNodes);
  return fragment;
}
