// Figure 6: gradients sum over paths. L = x*y + x*z stepped backward by gradwalk's engine;
// x gets a gradient along both routes and its .grad assembles with +=. The switch replays
// the same recorded sends with = instead (on the server), and x keeps only the last route.

import { h } from "../dom";
import { diagram, type DiagramEdge, type DiagramNode } from "./diagram";
import { fmt, frame, getFigure, initial, latest, readouts, rendered, slider, toggle, type FigurePage } from "./common";

type Leaves = { x: number | null; y: number | null; z: number | null };
interface Step {
  node: string;
  name: string;
  grad_in: (number | null)[];
  sends: { to: string; value: number | null }[];
  grads_add: Leaves;
  grads_assign: Leaves;
}
interface PathsSum {
  x: number;
  y: number;
  z: number;
  bug: boolean;
  L: number;
  forward: Record<string, number>;
  steps: Step[];
  grads: Leaves;
  engine_grads: Leaves;
  x_grad: number;
  expected_x_grad: number;
}

const PLACES: Record<string, [number, number]> = {
  x: [80, 130],
  y: [80, 40],
  z: [80, 220],
  "x*y": [290, 70],
  "x*z": [290, 190],
  "L = x*y + x*z": [500, 130],
};
const FORWARD_EDGES: [string, string][] = [
  ["x", "x*y"],
  ["y", "x*y"],
  ["x", "x*z"],
  ["z", "x*z"],
  ["x*y", "L = x*y + x*z"],
  ["x*z", "L = x*y + x*z"],
];

export const pathsSum: FigurePage = {
  id: "paths-sum",
  title: "Gradients sum over paths",
  lede: "x feeds two operations, so its gradient arrives along two routes: dL/dx = y + z, assembled with +=. Simulate the = bug.",
  mount(root, params) {
    const xs = slider({ id: "x", label: "x", min: -5, max: 5, step: 0.5, value: initial(params, "x", 2) });
    const ys = slider({ id: "y", label: "y", min: -5, max: 5, step: 0.5, value: initial(params, "y", 3) });
    const zs = slider({ id: "z", label: "z", min: -5, max: 5, step: 0.5, value: initial(params, "z", 4) });
    const bug = toggle("bug", "simulate the bug: grad = g instead of grad += g", initial(params, "bug", false));
    const reset = h("button", { type: "button", id: "reset-steps" }, "Reset");
    const back = h("button", { type: "button", id: "back-step" }, "Back");
    const step = h("button", { type: "button", id: "step-backward", class: "primary" }, "Step backward");
    const end = h("button", { type: "button", id: "end-steps" }, "Run to end");
    const position = h("span", { class: "position", id: "step-position" });
    const drawing = h("div", { class: "diagram-box" });
    const log = h("ol", { class: "step-log" });
    const values = readouts([
      ["x_grad", "x.grad"],
      ["y_grad", "y.grad"],
      ["z_grad", "z.grad"],
      ["expected", "y + z (both paths)"],
      ["engine", "gradwalk's engine: x.grad"],
    ]);
    const page = frame(root, [xs.el, ys.el, zs.el, bug.el, h("div", { class: "step-buttons" }, reset, back, step, end, position)], [drawing, log], [values.el]);

    let result: PathsSum | null = null;
    let cursor = 0; // steps applied

    function draw(): void {
      if (!result) return;
      const r = result;
      const applied = r.steps.slice(0, cursor);
      const grads = applied.length ? applied[applied.length - 1][r.bug ? "grads_assign" : "grads_add"] : { x: null, y: null, z: null };
      const popped = new Map(applied.map((s) => [s.node, s]));
      const current = applied[applied.length - 1]?.node;
      const forward = r.forward;
      const nodes: DiagramNode[] = Object.entries(PLACES).map(([id, [x, y]]) => {
        const isLeaf = id in grads;
        const g = isLeaf ? grads[id as keyof Leaves] : popped.get(id)?.grad_in[0] ?? null;
        return {
          id,
          x,
          y,
          title: id,
          cls: id === current ? "current" : "",
          lines: [
            { text: `value ${fmt(forward[id], 4)}`, cls: "fwd" },
            { text: g == null ? (isLeaf ? ".grad None" : "grad —") : `${isLeaf ? ".grad" : "grad"} ${fmt(g, 4)}`, cls: g == null ? "muted" : "grad" },
          ],
        };
      });
      const sent = new Map<string, number | null>();
      for (const s of applied) for (const send of s.sends) sent.set(`${send.to}->${s.node}`, send.value);
      const edges: DiagramEdge[] = FORWARD_EDGES.map(([from, to]) => {
        const key = `${from}->${to}`;
        return { from, to, cls: sent.has(key) ? "lit" : "", label: sent.has(key) ? fmt(sent.get(key) ?? null, 4) : undefined };
      });
      drawing.replaceChildren(diagram(600, 270, nodes, edges));
      values.set("x_grad", grads.x);
      values.set("y_grad", grads.y);
      values.set("z_grad", grads.z);
      values.set("expected", r.expected_x_grad);
      values.set("engine", r.engine_grads.x);
      root.dataset.xGrad = String(grads.x);
      position.textContent = `step ${cursor} of ${r.steps.length}`;
      log.replaceChildren(
        ...r.steps.map((s, i) => {
          const leafSends = s.sends.map((send) => `${fmt(send.value, 4)} → ${send.to}`).join(", ");
          const mode = r.bug ? s.grads_assign : s.grads_add;
          const text =
            s.name.endsWith("AccumulateGrad")
              ? `AccumulateGrad(${s.node}): ${s.node}.grad is now ${fmt(mode[s.node as keyof Leaves], 4)}`
              : `${s.name} (${s.node}) sends ${leafSends}${s.sends.some((x) => x.to in mode) ? (r.bug ? "; each leaf: grad = g" : "; each leaf: grad += g") : ""}`;
          return h("li", { class: i < cursor ? (i === cursor - 1 ? "current" : "done") : "todo" }, text);
        }),
      );
      rendered(root);
    }

    const load = latest(
      (p: Record<string, number | boolean>) => getFigure<PathsSum>("paths-sum", p, page.busy),
      (r: PathsSum) => {
        page.ok();
        // The figure opens at step 0 (nothing has gone backward yet); moving a slider keeps
        // the step the student is at.
        const keep = result ? cursor : 0;
        result = r;
        cursor = Math.min(keep, r.steps.length);
        draw();
      },
      (e) => page.error(e),
    );
    const refresh = () => void load({ x: xs.value, y: ys.value, z: zs.value, bug: bug.value });
    for (const c of [xs, ys, zs, bug]) c.onChange(refresh);
    const move = (to: number) => {
      if (!result) return;
      cursor = Math.max(0, Math.min(result.steps.length, to));
      draw();
    };
    reset.addEventListener("click", () => move(0));
    back.addEventListener("click", () => move(cursor - 1));
    step.addEventListener("click", () => move(cursor + 1));
    end.addEventListener("click", () => move(Infinity));
    refresh();
    return () => undefined;
  },
};
