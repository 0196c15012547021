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

/** AccumulateGrad's sequence number, 2**64 − 1 (UINT64_MAX), on screen and in full. */
export const MAX_SEQ = "2⁶⁴−1";
export const MAX_SEQ_FULL = "18446744073709551615";

/** Whether a sequence number the page was sent is 2**64 − 1. The lab's API sends null for it
 *  (docs/lab-api.md); sent as a JSON integer it parses as 2**64 (no double holds 2**64 − 1, and
 *  no real counter gets anywhere near 2**63); sent as a string it is exact. `nullIsMax`: false
 *  where null means "no sequence number" (the profiler's events, a recording's rows). */
export function isMaxSeq(seq: unknown, nullIsMax = true): boolean {
  if (seq == null) return nullIsMax;
  if (typeof seq === "number") return seq >= 2 ** 63;
  if (typeof seq === "bigint") return seq === 2n ** 64n - 1n;
  return String(seq) === MAX_SEQ_FULL;
}

/** A sequence number as written on screen: "2", "2⁶⁴−1"; `none` where null means none. */
export function seqText(seq: unknown, none: string | null = null): string {
  if (seq == null && none != null) return none;
  return isMaxSeq(seq) ? MAX_SEQ : String(seq);
}

/** The tooltip for a sequence number: the full value of 2⁶⁴−1. */
export function seqTitle(seq: unknown, nullIsMax = true): string | null {
  return isMaxSeq(seq, nullIsMax) ? `${MAX_SEQ_FULL} (2**64 − 1, the largest sequence number: AccumulateGrad's)` : null;
}

export function seqLabel(seq: unknown): string {
  return `seq ${seqText(seq)}`;
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
