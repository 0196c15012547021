// Boxes that scroll sideways (tables, code, a recording's tables) say so: `data-scrolls="1"`
// while their content is wider than they are, which lessons.css shows as a shadow on the side
// with more to see; such a box can take keyboard focus, so arrow keys scroll it too.

const BOXES = ".table-box, .prose table, pre.lesson-code";

function mark(box: HTMLElement): void {
  const scrolls = box.scrollWidth > box.clientWidth + 1;
  if (scrolls) {
    box.dataset.scrolls = "1";
    if (!box.hasAttribute("tabindex")) {
      box.tabIndex = 0;
      box.dataset.madeFocusable = "1";
    }
  } else {
    delete box.dataset.scrolls;
    if (box.dataset.madeFocusable) {
      box.removeAttribute("tabindex");
      delete box.dataset.madeFocusable;
    }
  }
}

/** Watch every sideways-scrolling box under `root`; returns the teardown. */
export function watchScrollers(root: HTMLElement): () => void {
  const boxes = [...root.querySelectorAll<HTMLElement>(BOXES)];
  const observer = new ResizeObserver((entries) => {
    for (const entry of entries) mark(entry.target as HTMLElement);
  });
  for (const box of boxes) {
    observer.observe(box);
    mark(box);
  }
  return () => observer.disconnect();
}

/** A table's empty header cell (a first column of row names) gets a name for screen readers. */
export function nameEmptyHeaders(root: HTMLElement): void {
  for (const th of root.querySelectorAll<HTMLTableCellElement>("th")) {
    if ((th.textContent ?? "").trim() || th.querySelector("img, svg, .katex")) continue;
    const label = document.createElement("span");
    label.className = "sr-only";
    label.textContent = "(row names)";
    th.append(label);
  }
}
