// The timeline: which state of which pass the page shows, rebuilt from the server's records.
//
// A run is a list of passes (one per backward() call). Each pass is shown as a series of frames:
// frame "0 steps applied" (the graph as it stood, the root in the ready queue with the seed),
// then one frame after each STEP, then (if the pass raised) one frame showing its error.
// Everything a frame shows is read from the records; the page computes no gradients itself.
//
// The two engines' records mean different things, and a frame never looks ahead:
// - mode "pytorch": `ready` is the ready queue; a node in it has its complete input buffer
//   (no gradient can arrive at a node whose dependency count is 0), which the records give in
//   the step that pops it, so that one value is read from the step ahead.
// - mode "topo" (micrograd): there is no ready queue; `ready` is the rest of the topological
//   order, and `buffers` is every gradient summed into a node so far. Nothing is read ahead.

import type { Buffer, DependencyChange, Graph, GraphEdge, Pass, ReadyEntry, RunResponse, Step, Tensor } from "./types";

export interface Frame {
  pass: number;
  /** how many steps of the pass have run */
  applied: number;
  /** true for the frame after the last step of a pass that raised */
  error: boolean;
}

export function buildFrames(run: RunResponse): Frame[] {
  const frames: Frame[] = [];
  run.passes.forEach((pass, p) => {
    for (let k = 0; k <= pass.steps.length; k++) frames.push({ pass: p, applied: k, error: false });
    if (pass.error) frames.push({ pass: p, applied: pass.steps.length, error: true });
  });
  return frames;
}

/** Stable key of an edge: consumer, producer and output index. */
export function edgeKey(edge: GraphEdge): string {
  return `${edge.from}>${edge.to}#${edge.output}`;
}

/** "ready": in PyTorch's ready queue; "pending": still to run in micrograd's topological order. */
export type NodeStatus = "waiting" | "ready" | "pending" | "current" | "done";

export interface PassState {
  frame: Frame;
  pass: Pass;
  graph: Graph;
  /** the step that produced this frame (null before the first step) */
  step: Step | null;
  status: Map<string, NodeStatus>;
  /** the queue (pytorch) or the rest of the topological order (topo), next first */
  ready: ReadyEntry[];
  /** the node the next step runs (null at the end) */
  next: string | null;
  dependencies: Map<string, number>;
  /** dependency counts changed by this step */
  dependencyChanges: DependencyChange[];
  buffers: Buffer[];
  /** "node/savedName" of every freed saved tensor */
  freed: Set<string>;
  /** "node/savedName" freed by this step */
  releasedNow: Set<string>;
  /** .grad of each leaf, by leaf name */
  leafGrads: Map<string, Tensor | null>;
  writtenNow: Set<string>;
  /** gradient carried by each edge so far, by edgeKey */
  carried: Map<string, Tensor | null>;
  carriedNow: Set<string>;
  /** the gradient each node has received so far (its input buffer), null if nothing yet */
  nodeGrad: Map<string, (Tensor | null)[] | null>;
}

/** Assign each grads_out entry of a step to one graph edge (by output order, then to/input_nr). */
export function matchGradsOut(graph: Graph, step: Step): { edge: GraphEdge; value: Tensor | null }[] {
  const outgoing = graph.edges.filter((e) => e.from === step.node).sort((a, b) => a.output - b.output);
  const used = new Set<GraphEdge>();
  const matched: { edge: GraphEdge; value: Tensor | null }[] = [];
  for (const out of step.grads_out) {
    const edge = outgoing.find((e) => !used.has(e) && e.to === out.to && e.input_nr === out.input_nr);
    if (edge) {
      used.add(edge);
      matched.push({ edge, value: out.value });
    }
  }
  return matched;
}

/** The leaf .grad values as they stood before pass p started (before the first pass: what
 *  earlier forward passes left there, `grad_before`, or None). */
export function gradsBefore(run: RunResponse, p: number): Map<string, Tensor | null> {
  const grads = new Map<string, Tensor | null>();
  for (const leaf of run.leaves) grads.set(leaf.name, leaf.grad_before ?? null);
  if (p > 0) for (const [name, value] of Object.entries(run.passes[p - 1].grads)) grads.set(name, value);
  return grads;
}

export function stateAt(run: RunResponse, frame: Frame): PassState {
  const pass = run.passes[frame.pass];
  const graph = pass.graph;
  const steps = pass.steps.slice(0, frame.applied);
  const step = steps.length ? steps[steps.length - 1] : null;

  const dependencies = new Map(graph.nodes.map((n) => [n.id, n.dependencies]));
  const freed = new Set<string>();
  for (const node of graph.nodes) for (const s of node.saved) if (s.freed) freed.add(`${node.id}/${s.name}`);
  const leafGrads = gradsBefore(run, frame.pass);
  const carried = new Map<string, Tensor | null>();
  const popped = new Map<string, Step>();
  let carriedNow = new Set<string>();

  for (const s of steps) {
    popped.set(s.node, s);
    for (const d of s.dependencies) dependencies.set(d.node, d.after);
    for (const name of s.released) freed.add(`${s.node}/${name}`);
    for (const w of s.leaf_grads) leafGrads.set(w.leaf, w.value);
    carriedNow = new Set();
    for (const { edge, value } of matchGradsOut(graph, s)) {
      carried.set(edgeKey(edge), value);
      carriedNow.add(edgeKey(edge));
    }
  }

  const ready: ReadyEntry[] = step
    ? step.ready
    : (() => {
        const root = graph.nodes.find((n) => n.id === graph.root);
        return root ? [{ node: root.id, name: root.name, seq: root.seq }] : [];
      })();
  const buffers = step ? step.buffers : [];
  const readyIds = new Set(ready.map((r) => r.node));
  const topo = run.mode === "topo";

  const status = new Map<string, NodeStatus>();
  for (const node of graph.nodes) {
    let st: NodeStatus = "waiting";
    if (step && node.id === step.node) st = "current";
    else if (popped.has(node.id)) st = "done";
    else if (readyIds.has(node.id)) st = topo ? "pending" : "ready";
    status.set(node.id, st);
  }

  const nodeGrad = new Map<string, (Tensor | null)[] | null>();
  const bufferOf = new Map(buffers.map((b) => [b.node, b.slots]));
  for (const node of graph.nodes) {
    let grad: (Tensor | null)[] | null = null;
    const ran = popped.get(node.id);
    if (ran) grad = ran.grad_in;
    else if (bufferOf.has(node.id)) grad = bufferOf.get(node.id) ?? null;
    else if (topo) {
      // micrograd's order: only what has been summed so far (buffers); at the start, the seed
      if (node.id === graph.root && !step) grad = [graph.seed];
    } else if (readyIds.has(node.id)) {
      // A ready node's buffer is complete; the records give it when the node is popped.
      const later = pass.steps.slice(frame.applied).find((s) => s.node === node.id);
      if (later) grad = later.grad_in;
      else if (node.id === graph.root) grad = [graph.seed];
      else {
        const incoming = graph.edges.filter((e) => e.to === node.id && carried.has(edgeKey(e)));
        if (incoming.length === 1) grad = [carried.get(edgeKey(incoming[0])) ?? null];
      }
    }
    nodeGrad.set(node.id, grad);
  }

  return {
    frame,
    pass,
    graph,
    step,
    status,
    ready,
    next: frame.error ? null : (pass.steps[frame.applied]?.node ?? null),
    dependencies,
    dependencyChanges: step ? step.dependencies : [],
    buffers,
    freed,
    releasedNow: new Set(step ? step.released.map((name) => `${step.node}/${name}`) : []),
    leafGrads,
    writtenNow: new Set(step ? step.leaf_grads.map((w) => w.leaf) : []),
    carried,
    carriedNow,
    nodeGrad,
  };
}
