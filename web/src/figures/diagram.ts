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

export function diagram(width: number, height: number, nodes: DiagramNode[], edges: DiagramEdge[]): SVGSVGElement {
  const svg = el("svg", { viewBox: `0 0 ${width} ${height}`, class: "diagram", role: "img" });
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
    const x1 = a.x + W / 2;
    const x2 = b.x - W / 2;
    const path = el("path", {
      d: `M${x1},${a.y} C${(x1 + x2) / 2},${a.y} ${(x1 + x2) / 2},${b.y} ${x2},${b.y}`,
      class: `edge ${e.cls ?? ""}`,
      "marker-end": `url(#${e.cls === "lit" ? "arrow-lit" : "arrow"})`,
      "data-edge": `${e.from}->${e.to}`,
    });
    svg.append(path);
    if (e.label) {
      const t = el("text", { x: (x1 + x2) / 2, y: (a.y + b.y) / 2 - 6, class: "edge-label grad", "text-anchor": "middle" });
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
