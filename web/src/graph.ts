// The graph panel: the backward graph of one pass, written as DOT, laid out by Graphviz (wasm,
// bundled), then brought up to date at every step by setting classes, data attributes and the
// text of gradient labels on the SVG. Layout happens once per pass, so nothing moves while stepping.
//
// Drawing: the forward pass goes bottom to top (leaves at the bottom, the output's node and the seed
// on top); arrows point the way the gradient flows, downwards. Forward values are blue, gradients
// orange.

import { Graphviz } from "@hpcc-js/wasm-graphviz";
import { formatShort } from "./tensor";
import { edgeKey, matchGradsOut, type PassState } from "./timeline";
import { className, displayName, isMaxSeq, MAX_SEQ, MAX_SEQ_FULL, seqLabel } from "./panels/names";
import type { Graph, GraphNode, Pass, RunResponse, Tensor } from "./types";

let graphviz: Graphviz | null = null;

/** Load the Graphviz wasm (inlined in the bundle: no fetch). */
export async function loadGraphviz(): Promise<void> {
  graphviz ??= await Graphviz.load();
}

type Role = "name" | "seq" | "forward" | "grad" | "leafgrad" | "saved";
interface Row {
  role: Role;
  text: string;
  saved?: string;
}

interface NodeView {
  g: SVGGElement;
  node: GraphNode;
  texts: Map<Role, SVGTextElement>;
  saved: Map<string, SVGTextElement>;
}

interface EdgeView {
  g: SVGGElement;
  label: SVGTextElement | null;
}

export interface GraphView {
  pass: Pass;
  svg: SVGSVGElement;
  /** natural size in px */
  width: number;
  height: number;
  nodes: Map<string, NodeView>;
  edges: Map<string, EdgeView>;
}

const FONT = "Helvetica";
const PX_PER_PT = 1.25;

function esc(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function gradText(slots: (Tensor | null)[] | null | undefined): string {
  if (!slots) return "";
  return slots.map((t) => formatShort(t)).join(", ");
}

function seqText(node: GraphNode): string {
  return seqLabel(node.seq);
}

/** The rows of a node's label. Gradient rows carry the final value of the pass so the layout
 * reserves their width; they are hidden until the gradient arrives. */
function labelRows(node: GraphNode, pass: Pass, run: RunResponse): Row[] {
  const popped = pass.steps.find((s) => s.node === node.id);
  const finalGrad = popped ? popped.grad_in : node.id === pass.graph.root ? [pass.graph.seed] : null;
  const rows: Row[] = [];
  if (node.kind === "accumulate") {
    const leafName = node.variable ?? node.forward?.name ?? "leaf";
    const leaf = run.leaves.find((l) => l.name === leafName);
    const value = leaf?.value ?? node.forward?.value ?? null;
    rows.push({ role: "name", text: `${className(node.name)} (${leafName})` });
    if (value) rows.push({ role: "forward", text: `${leafName} = ${formatShort(value)}` });
    const final = pass.grads[leafName] ?? null;
    rows.push({ role: "leafgrad", text: `${leafName}.grad = ${formatShort(final)}` });
    return rows;
  }
  rows.push({ role: "name", text: displayName(node) });
  if (node.kind !== "root" || node.seq != null) rows.push({ role: "seq", text: seqText(node) });
  if (node.forward) rows.push({ role: "forward", text: `${node.forward.name} = ${formatShort(node.forward.value)}` });
  rows.push({ role: "grad", text: `grad ${gradText(finalGrad) || "—"}` });
  for (const s of node.saved) {
    rows.push({ role: "saved", saved: s.name, text: `saved ${s.name} = ${s.value ? formatShort(s.value) : "…"}` });
  }
  return rows;
}

const ROW_STYLE: Record<Role, { color: string; size: number; bold?: boolean }> = {
  name: { color: "#1f2933", size: 13, bold: true },
  seq: { color: "#6b7280", size: 11 },
  forward: { color: "#1d4ed8", size: 12 },
  grad: { color: "#c2410c", size: 12 },
  leafgrad: { color: "#c2410c", size: 12 },
  saved: { color: "#6b7280", size: 11 },
};

function htmlLabel(rows: Row[]): string {
  // One <td> per row and one text run per <td>: the SVG then has one <text> per row, in order.
  const trs = rows.map((row) => {
    const st = ROW_STYLE[row.role];
    let body = esc(row.text);
    if (st.bold) body = `<b>${body}</b>`;
    return `<tr><td align="left"><font color="${st.color}" point-size="${st.size}">${body}</font></td></tr>`;
  });
  return `<<table border="0" cellborder="0" cellspacing="0" cellpadding="1">${trs.join("")}</table>>`;
}

function quote(id: string): string {
  return `"${id.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** The DOT text of a pass's graph, plus each node's label rows (to find the SVG texts again). */
export function buildDot(pass: Pass, run: RunResponse): { dot: string; rows: Map<string, Row[]> } {
  const graph: Graph = pass.graph;
  const rows = new Map<string, Row[]>();
  const lines = [
    "digraph backward {",
    // Compact: a long chain (the "mixed" preset) is tall. Edge labels are xlabels, placed after
    // the layout, so they do not add a rank of their own between two nodes.
    `  graph [rankdir=BT, bgcolor="transparent", nodesep=0.25, ranksep=0.3, pad=0.15, forcelabels=true, fontname="${FONT}"];`,
    `  node [shape=box, style="rounded,filled", fillcolor="#ffffff", color="#9aa5b1", penwidth=1.2, fontname="${FONT}", margin="0.12,0.06"];`,
    `  edge [dir=back, color="#9aa5b1", penwidth=1.2, arrowsize=0.75, fontname="${FONT}", fontsize=11, fontcolor="#c2410c"];`,
  ];
  graph.nodes.forEach((node, i) => {
    const r = labelRows(node, pass, run);
    rows.set(node.id, r);
    const fill = node.kind === "accumulate" ? "#eef4ff" : "#ffffff";
    lines.push(`  ${quote(node.id)} [id="gn-${i}", fillcolor="${fill}", label=${htmlLabel(r)}];`);
  });
  // A small node for the seed: the gradient the pass starts from (ones_like(output)).
  const root = graph.nodes.find((n) => n.id === graph.root);
  const outName = root?.forward?.name ?? "out";
  const seed = `∂${outName}/∂${outName} = ${formatShort(graph.seed)}`;
  lines.push(
    `  "__seed__" [id="gn-seed", shape=plaintext, style="", label=<<font color="#c2410c" point-size="12">${esc(seed)}</font>>];`,
  );
  if (root) lines.push(`  ${quote(root.id)} -> "__seed__" [id="ge-seed"];`);

  // Edge labels show the gradient each edge will carry in this pass (hidden until it does).
  const carriedText = new Map<string, string>();
  for (const step of pass.steps) {
    for (const { edge, value } of matchGradsOut(graph, step)) carriedText.set(edgeKey(edge), formatShort(value));
  }
  graph.edges.forEach((edge, i) => {
    const text = carriedText.get(edgeKey(edge));
    const label = text ? `, xlabel=${quote(" " + text + " ")}` : "";
    // Written producer -> consumer so the layout follows the forward pass; dir=back draws the
    // arrowhead at the producer, the way the gradient goes.
    lines.push(`  ${quote(edge.to)} -> ${quote(edge.from)} [id="ge-${i}"${label}];`);
  });
  lines.push("}");
  return { dot: lines.join("\n"), rows };
}

/** Lay the pass out and put the SVG into `container`. */
export function renderGraph(container: HTMLElement, pass: Pass, run: RunResponse): GraphView {
  if (!graphviz) throw new Error("Graphviz is not loaded");
  const { dot, rows } = buildDot(pass, run);
  container.innerHTML = graphviz.dot(dot);
  const svg = container.querySelector("svg");
  if (!svg) throw new Error("Graphviz returned no SVG");

  // Natural size: Graphviz's points at 1.25 px each; zoom.ts sets the size it is drawn at.
  const width = parseFloat(svg.getAttribute("width") ?? "0") * PX_PER_PT;
  const height = parseFloat(svg.getAttribute("height") ?? "0") * PX_PER_PT;
  svg.setAttribute("width", String(Math.round(width)));
  svg.setAttribute("height", String(Math.round(height)));
  svg.setAttribute("role", "img");
  svg.setAttribute(
    "aria-label",
    `Backward graph of ${pass.call}: ${pass.graph.nodes.length} nodes, ${pass.graph.edges.length} edges`,
  );
  for (const el of svg.querySelectorAll("g.graph > title")) el.remove();

  const nodes = new Map<string, NodeView>();
  pass.graph.nodes.forEach((node, i) => {
    const g = svg.querySelector<SVGGElement>(`g.node[id="gn-${i}"]`);
    if (!g) return;
    g.dataset.id = node.id;
    g.dataset.name = node.name;
    g.dataset.kind = node.kind;
    // AccumulateGrad (2**64 − 1, however it was sent) has no data-seq, as before
    if (node.seq != null && !isMaxSeq(node.seq)) g.dataset.seq = String(node.seq);
    if (node.variable) g.dataset.variable = node.variable;
    g.classList.add(`kind-${node.kind}`);
    const title = g.querySelector("title");
    // The tooltip keeps the API's (C++) name: torch::autograd::AccumulateGrad.
    if (title) title.textContent = node.seq == null && node.kind === "root" ? node.name : `${node.name} (seq ${isMaxSeq(node.seq) ? `${MAX_SEQ} = ${MAX_SEQ_FULL}` : node.seq})`;
    const view: NodeView = { g, node, texts: new Map(), saved: new Map() };
    const texts = Array.from(g.querySelectorAll<SVGTextElement>("text"));
    const r = rows.get(node.id) ?? [];
    if (texts.length === r.length) {
      r.forEach((row, j) => {
        const t = texts[j];
        t.classList.add(`t-${row.role}`);
        t.removeAttribute("fill");
        if (row.role === "saved" && row.saved != null) {
          t.dataset.saved = row.saved;
          view.saved.set(row.saved, t);
        } else view.texts.set(row.role, t);
      });
    }
    nodes.set(node.id, view);
  });
  const seedNode = svg.querySelector<SVGGElement>('g.node[id="gn-seed"]');
  if (seedNode) {
    seedNode.dataset.id = "seed";
    seedNode.classList.add("seed");
    seedNode.querySelector("text")?.classList.add("t-grad");
    seedNode.querySelector("text")?.removeAttribute("fill");
    const title = seedNode.querySelector("title");
    if (title) title.textContent = "the seed: the gradient backward() starts from";
  }

  const edges = new Map<string, EdgeView>();
  pass.graph.edges.forEach((edge, i) => {
    const g = svg.querySelector<SVGGElement>(`g.edge[id="ge-${i}"]`);
    if (!g) return;
    g.dataset.from = edge.from;
    g.dataset.to = edge.to;
    g.dataset.output = String(edge.output);
    g.dataset.inputNr = String(edge.input_nr);
    const label = g.querySelector<SVGTextElement>("text");
    label?.classList.add("t-grad");
    label?.removeAttribute("fill");
    const title = g.querySelector("title");
    if (title) title.textContent = `gradient from ${edge.from} to ${edge.to} (input ${edge.input_nr})`;
    edges.set(edgeKey(edge), { g, label });
  });
  const seedEdge = svg.querySelector<SVGGElement>('g.edge[id="ge-seed"]');
  if (seedEdge) {
    seedEdge.classList.add("seed", "lit");
    seedEdge.dataset.from = "seed";
    seedEdge.dataset.to = pass.graph.root;
    seedEdge.querySelector("title")?.remove();
  }

  return { pass, svg, width, height, nodes, edges };
}

const STATES = ["waiting", "ready", "pending", "current", "done"] as const;

/** Bring the drawn graph up to date with one frame. */
export function updateGraph(view: GraphView, state: PassState): void {
  for (const [id, nv] of view.nodes) {
    const status = state.status.get(id) ?? "waiting";
    nv.g.classList.remove(...STATES);
    nv.g.classList.add(status);
    nv.g.dataset.state = status;
    nv.g.classList.toggle("next", state.next === id);
    nv.g.dataset.deps = String(state.dependencies.get(id) ?? 0);

    const grad = state.nodeGrad.get(id) ?? null;
    nv.g.classList.toggle("has-grad", grad != null);
    const gradEl = nv.texts.get("grad");
    if (gradEl) {
      gradEl.textContent = grad == null ? "grad: not yet" : `grad ${gradText(grad) || "—"}`;
      gradEl.classList.toggle("pending", grad == null);
    }
    const leafEl = nv.texts.get("leafgrad");
    if (leafEl) {
      const name = nv.node.variable ?? "leaf";
      leafEl.textContent = `${name}.grad = ${formatShort(state.leafGrads.get(name) ?? null)}`;
      leafEl.classList.toggle("written", state.writtenNow.has(name));
    }
    for (const [name, el] of nv.saved) {
      const key = `${id}/${name}`;
      el.classList.toggle("freed", state.freed.has(key));
      el.classList.toggle("released-now", state.releasedNow.has(key));
    }
    const freedAll = nv.node.saved.length > 0 && nv.node.saved.every((s) => state.freed.has(`${id}/${s.name}`));
    nv.g.classList.toggle("saved-freed", freedAll);
  }
  for (const [key, ev] of view.edges) {
    const lit = state.carried.has(key);
    ev.g.classList.toggle("lit", lit);
    ev.g.classList.toggle("current", state.carriedNow.has(key));
    ev.label?.classList.toggle("hidden", !lit);
  }
}
