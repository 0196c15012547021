// The JSON contract of docs/lab-api.md, as TypeScript types. Nothing here runs.

/** A JSON number, or one of the strings the server uses for non-finite values. */
export type Num = number | "inf" | "-inf" | "nan";

/** Nested lists of numbers, as deep as the shape is long (a bare number for a scalar). */
export type NestedData = Num | NestedData[];

export interface Tensor {
  shape: number[];
  dtype: string;
  data: NestedData;
}

export interface ApiError {
  type: string;
  message: string;
  line: number | null;
  col: number | null;
  /** the HTTP status of a refusal (the page's own field: a snippet the lab would not run) */
  status?: number;
}

export interface Leaf {
  name: string;
  value: Tensor;
  grad: Tensor | null;
  /** .grad when the snippet's first backward() began: what `earlier_passes` forward+backward
   *  passes of the same snippet left there (absent or null: None) */
  grad_before?: Tensor | null;
  node: string | null;
}

export interface ForwardValue {
  name: string;
  line: number | null;
  value: Tensor;
  grad_fn: string | null;
  seq: number | null;
}

export interface SavedTensor {
  name: string;
  value: Tensor | null;
  freed: boolean;
}

export type NodeKind = "function" | "accumulate" | "root";

export interface GraphNode {
  id: string;
  name: string;
  /** null for AccumulateGrad, whose sequence number is 2**64-1 */
  seq: number | null;
  kind: NodeKind;
  /** the leaf's name, for AccumulateGrad */
  variable: string | null;
  saved: SavedTensor[];
  /** how many edges point at this node (compute_dependencies) */
  dependencies: number;
  /** the tensor this node produced in the forward pass */
  forward: { name: string; value: Tensor } | null;
}

export interface GraphEdge {
  /** the consumer: the node whose formula produces the gradient */
  from: string;
  /** the node that produced the input in the forward pass; the gradient goes here */
  to: string;
  /** which of from's outputs (its next_edges index) */
  output: number;
  /** which slot of to's input buffer */
  input_nr: number;
}

export interface Graph {
  root: string;
  seed: Tensor;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

export interface GradOut {
  to: string;
  input_nr: number;
  value: Tensor | null;
}

export interface DependencyChange {
  node: string;
  before: number;
  after: number;
}

export interface Buffer {
  node: string;
  slots: (Tensor | null)[];
}

export interface ReadyEntry {
  node: string;
  name: string;
  seq: number | null;
}

export interface LeafGradWrite {
  leaf: string;
  value: Tensor;
}

export interface Step {
  index: number;
  node: string;
  name: string;
  seq: number | null;
  grad_in: (Tensor | null)[];
  grads_out: GradOut[];
  dependencies: DependencyChange[];
  buffers: Buffer[];
  ready: ReadyEntry[];
  released: string[];
  leaf_grads: LeafGradWrite[];
  text: string;
}

export interface Pass {
  call: string;
  line: number | null;
  graph: Graph;
  steps: Step[];
  grads: Record<string, Tensor | null>;
  error: ApiError | null;
}

export type Mode = "pytorch" | "topo";

export interface RunResponse {
  ok: boolean;
  mode: Mode;
  leaves: Leaf[];
  values: ForwardValue[];
  passes: Pass[];
  prints: string[];
  error: ApiError | null;
  /** the sequence counter after the run: "New forward pass" sends it as sequence_start */
  next_sequence_nr: number;
}

export interface RunRequest {
  source: string;
  mode: Mode;
  /** the sequence counter's value when the snippet starts (default 0, a fresh Python) */
  sequence_start?: number;
  /** how many times the snippet's forward+backward ran before, keeping .grad (default 0) */
  earlier_passes?: number;
}

export interface Preset {
  id: string;
  title: string;
  source: string;
}
