// A tiny helper for building DOM nodes; the panels use nothing else.

type Child = Node | string | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined>;

/** h("li", {class: "x", "data-node": "n5"}, "text", child) */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value == null || value === false) continue;
    el.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child == null || child === false) continue;
    el.append(child);
  }
  return el;
}

/** Replace everything inside `el`. */
export function fill(el: HTMLElement, ...children: (Child | Child[])[]): void {
  el.replaceChildren(...children.flat().filter((c): c is Node | string => c != null && c !== false));
}

/** A muted line for empty panels. */
export function empty(text: string): HTMLElement {
  return h("p", { class: "empty" }, text);
}
