// The side panels' tables: a fixed layout (column widths set here, not by the longest cell), so
// a table always fits its card. Text that does not fit ends in "…" and shows in full as a tooltip.

import { h } from "../dom";

export interface Column {
  head: string | HTMLElement;
  /** a CSS width ("3.5em", "30%"); the columns without one share what is left */
  width?: string;
  /** "num" right-aligns */
  class?: string;
  /** the header's tooltip */
  title?: string;
}

/** A <td> whose full text is also its tooltip (for when it is cut with an ellipsis). */
export function cell(text: string, cls: string | null = null): HTMLTableCellElement {
  return h("td", { class: cls, title: text }, text);
}

export function fitTable(columns: Column[], rows: HTMLTableRowElement[]): HTMLTableElement {
  return h(
    "table",
    { class: "fit" },
    h("colgroup", {}, columns.map((c) => h("col", { style: c.width ? `width: ${c.width}` : null }))),
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { class: c.class ?? null, title: c.title ?? null }, c.head)))),
    h("tbody", {}, rows),
  );
}
