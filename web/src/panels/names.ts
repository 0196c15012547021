// How the page names a node: "TanhBackward0 · seq 2", "AccumulateGrad(w)".
//
// The API's `name` is the node's C++ name (`torch::autograd::AccumulateGrad`, `GraphRoot`,
// `torch::autograd::CopySlices`); on screen we write the class name PyTorch's repr uses
// (`<AccumulateGrad object at ...>`): the part after the last `::`. Data attributes keep the
// API's name.

import type { Graph, GraphNode } from "../types";

export function nodeById(graph: Graph, id: string): GraphNode | undefined {
  return graph.nodes.find((n) => n.id === id);
}

export function seqLabel(seq: number | null): string {
  return seq == null ? "seq max" : `seq ${seq}`;
}

/** "torch::autograd::AccumulateGrad" → "AccumulateGrad"; "TanhBackward0" stays. */
export function className(name: string): string {
  const i = name.lastIndexOf("::");
  return i < 0 ? name : name.slice(i + 2);
}

/** A node's display name; AccumulateGrad carries its leaf's name: "AccumulateGrad(w)". */
export function displayName(node: GraphNode): string {
  const name = className(node.name);
  return node.kind === "accumulate" && node.variable ? `${name}(${node.variable})` : name;
}

/** The display name of the node `id` of `graph` (the id itself when there is no such node). */
export function nodeName(graph: Graph, id: string): string {
  const node = nodeById(graph, id);
  return node ? displayName(node) : id;
}
