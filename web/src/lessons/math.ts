// Math: the server writes TeX as text in <span class="math inline"> ($...$), <span class="math
// display"> ($$...$$ inside a paragraph) and <div class="math block"> ($$ on lines of their own);
// KaTeX (bundled, with its fonts: the page stays offline) typesets it in place, in display mode
// for the last two.

import katex from "katex";
import "katex/dist/katex.min.css";

export function typeset(root: ParentNode): void {
  for (const el of root.querySelectorAll<HTMLElement>(".math.inline, .math.display, .math.block")) {
    if (el.dataset.typeset) continue;
    const tex = el.textContent ?? "";
    const display = el.classList.contains("block") || el.classList.contains("display");
    try {
      katex.render(tex, el, { displayMode: display, throwOnError: false, output: "htmlAndMathml" });
      el.dataset.typeset = "1";
    } catch (e) {
      // throwOnError: false covers TeX errors; anything else leaves the TeX readable as text
      el.textContent = tex;
      el.dataset.typeset = "error";
      el.title = String(e);
    }
    el.dataset.tex = tex;
  }
}
