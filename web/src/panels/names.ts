// How panels name a node: "TanhBackward0 · seq 2", "AccumulateGrad (w)".

import type { Graph, GraphNode } from "../types";

export function nodeById(graph: Graph, id: string): GraphNode | undefined {
  return graph.nodes.find((n) => n.id === id);
}

export function seqLabel(seq: number | null): string {
  return seq == null ? "seq max" : `seq ${seq}`;
}

/** The node's display name; AccumulateGrad carries its leaf's name. */
export function nodeName(graph: Graph, id: string): string {
  const node = nodeById(graph, id);
  if (!node) return id;
  return node.kind === "accumulate" && node.variable ? `${node.name}(${node.variable})` : node.name;
}
