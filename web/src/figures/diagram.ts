// A small hand-placed graph drawing (SVG) for the figures whose graph never changes shape:
// boxes with a title line and value lines, and arrows between them.

const SVG = "http://www.w3.org/2000/svg";

export interface DiagramNode {
  id: string;
  x: number; // centre, in the viewBox's units
  y: number;
  title: string;
  lines: { text: string; cls: "fwd" | "grad" | "muted" | "dead" }[];
  cls?: string; // "current", "dead", ...
}

export interface DiagramEdge {
  from: string;
  to: string;
  cls?: string; // "lit", "dead"
  label?: string;
}

function el<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

const W = 118;
const LINE = 16;

/** Below this width the diagram is drawn top to bottom instead of left to right, so a phone
 *  shows all of it at a readable size instead of cutting it off on the right. */
const NARROW = 560;

/** The same layout turned a quarter: columns become rows, rows become columns, spaced so that
 *  boxes never overlap. */
function upright(nodes: DiagramNode[]): { nodes: DiagramNode[]; width: number; height: number } {
  const xs = [...new Set(nodes.map((n) => n.x))].sort((a, b) => a - b);
  const tallest = Math.max(...nodes.map((n) => 22 + n.lines.length * LINE));
  const gapY = tallest + 46; // room for an edge label between rows
  // each old column becomes a row; its boxes spread evenly across the width, in their old order
  const rows = xs.map((x) => nodes.filter((n) => n.x === x).sort((a, b) => a.y - b.y));
  const most = Math.max(...rows.map((r) => r.length));
  const width = most * (W + 14) + 8;
  const place = new Map<DiagramNode, { x: number; y: number }>();
  rows.forEach((row, r) =>
    row.forEach((n, i) => place.set(n, { x: 4 + ((i + 0.5) / row.length) * (width - 8), y: 12 + tallest / 2 + r * gapY })),
  );
  const moved = nodes.map((n) => ({ ...n, ...place.get(n)! }));
  return { nodes: moved, width, height: Math.round(12 + tallest + (xs.length - 1) * gapY + 12) };
}

/** What a screen reader says for the drawing: every box with its lines, in order. */
export function diagramLabel(nodes: DiagramNode[], edges: DiagramEdge[]): string {
  const boxes = nodes.map((n) => (n.lines.length ? `${n.title} (${n.lines.map((l) => l.text).join(", ")})` : n.title));
  const arrows = edges.map((e) => `${nodes.find((n) => n.id === e.from)?.title ?? e.from} to ${nodes.find((n) => n.id === e.to)?.title ?? e.to}${e.label ? ` carrying ${e.label}` : ""}`);
  return `Graph of ${nodes.length} boxes: ${boxes.join("; ")}. Arrows: ${arrows.join("; ")}.`;
}

export function diagram(width: number, height: number, nodes: DiagramNode[], edges: DiagramEdge[], room?: number): SVGSVGElement {
  const vertical = (room ?? window.innerWidth) < NARROW;
  const label = diagramLabel(nodes, edges);
  if (vertical) ({ nodes, width, height } = upright(nodes));
  const svg = el("svg", { viewBox: `0 0 ${width} ${height}`, class: vertical ? "diagram upright" : "diagram", role: "img", "aria-label": label });
  const defs = el("defs", {});
  for (const [id, color] of [["arrow", "#9aa5b1"], ["arrow-lit", "#c2410c"]]) {
    const marker = el("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
    marker.append(el("path", { d: "M0,0 L10,5 L0,10 z", fill: color }));
    defs.append(marker);
  }
  svg.append(defs);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const heightOf = (n: DiagramNode) => 22 + n.lines.length * LINE;
  for (const e of edges) {
    const a = byId.get(e.from)!;
    const b = byId.get(e.to)!;
    const x1 = vertical ? a.x : a.x + W / 2;
    const x2 = vertical ? b.x : b.x - W / 2;
    const y1 = vertical ? a.y + heightOf(a) / 2 : a.y;
    const y2 = vertical ? b.y - heightOf(b) / 2 : b.y;
    const d = vertical
      ? `M${x1},${y1} C${x1},${(y1 + y2) / 2} ${x2},${(y1 + y2) / 2} ${x2},${y2}`
      : `M${x1},${y1} C${(x1 + x2) / 2},${y1} ${(x1 + x2) / 2},${y2} ${x2},${y2}`;
    const path = el("path", {
      d,
      class: `edge ${e.cls ?? ""}`,
      "marker-end": `url(#${e.cls === "lit" ? "arrow-lit" : "arrow"})`,
      "data-edge": `${e.from}->${e.to}`,
    });
    svg.append(path);
    if (e.label) {
      const t = el("text", { x: (x1 + x2) / 2 + (vertical ? 6 : 0), y: (y1 + y2) / 2 - (vertical ? -4 : 6), class: "edge-label grad", "text-anchor": vertical ? "start" : "middle" });
      t.textContent = e.label;
      svg.append(t);
    }
  }
  for (const n of nodes) {
    const hgt = heightOf(n);
    const g = el("g", { class: `dnode ${n.cls ?? ""}`, "data-node": n.id });
    g.append(el("rect", { x: n.x - W / 2, y: n.y - hgt / 2, width: W, height: hgt, rx: 7 }));
    const title = el("text", { x: n.x, y: n.y - hgt / 2 + 16, class: "dtitle", "text-anchor": "middle" });
    title.textContent = n.title;
    g.append(title);
    n.lines.forEach((line, i) => {
      const t = el("text", { x: n.x, y: n.y - hgt / 2 + 16 + (i + 1) * LINE, class: line.cls, "text-anchor": "middle" });
      t.textContent = line.text;
      g.append(t);
    });
    svg.append(g);
  }
  return svg;
}
