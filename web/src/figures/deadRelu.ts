// Figure 8: dead ReLU. y = relu(x1*x2 + b): move b below −x1·x2 and the pre-activation goes
// negative, relu's local slope becomes 0 and every gradient upstream of it turns to zero.

import { h } from "../dom";
import { diagram, type DiagramNode } from "./diagram";
import { COLORS, fmt, frame, getFigure, initial, latest, lineChart, plottable, readouts, rendered, slider, type FigurePage, type Num } from "./common";

interface DeadRelu {
  x1: number;
  x2: number;
  b: number;
  dead: boolean;
  forward: { "x1*x2": number; z: number; y: number };
  grads: { y: number; z: number; "x1*x2": number; x1: number; x2: number; b: number };
  sweep: { b: Num[]; x1: Num[]; x2: Num[]; b_grad: Num[] };
}

export const deadRelu: FigurePage = {
  id: "dead-relu",
  title: "Dead ReLU",
  lede: "y = relu(x₁·x₂ + b) with x₁ = 2, x₂ = 3. Push b below −6: relu outputs 0, its slope is 0, and every gradient upstream dies.",
  mount(root, params) {
    const b = slider({ id: "b", label: "bias b", min: -10, max: 3, step: 0.1, value: initial(params, "b", 1) });
    const drawing = h("div", { class: "diagram-box" });
    const chartBox = h("div", { class: "chart-box" });
    const values = readouts([
      ["z", "pre-activation z = x₁·x₂ + b"],
      ["y", "y = relu(z)"],
      ["grad_x1", "x1.grad"],
      ["grad_x2", "x2.grad"],
      ["grad_b", "b.grad"],
      ["dead", "dead?"],
    ]);
    const page = frame(root, [b.el], [drawing, chartBox], [values.el]);
    const chart = lineChart(chartBox, {
      title: "gradients as b moves",
      xLabel: "b",
      yLabel: "gradient",
      series: [
        { label: "x1.grad", color: COLORS.fwd },
        { label: "x2.grad", color: COLORS.purple },
        { label: "b.grad", color: COLORS.grad },
      ],
      height: 220,
    });

    const show = (r: DeadRelu) => {
      page.ok();
      const g = r.grads;
      const dead = r.dead ? "dead" : "";
      const line = (v: number) => ({ text: `grad ${fmt(v, 4)}`, cls: r.dead ? ("dead" as const) : ("grad" as const) });
      const nodes: DiagramNode[] = [
        { id: "x1", x: 80, y: 40, title: "x₁", lines: [{ text: `value ${fmt(r.x1)}`, cls: "fwd" }, line(g.x1)], cls: dead },
        { id: "x2", x: 80, y: 130, title: "x₂", lines: [{ text: `value ${fmt(r.x2)}`, cls: "fwd" }, line(g.x2)], cls: dead },
        { id: "b", x: 80, y: 220, title: "b", lines: [{ text: `value ${fmt(r.b, 4)}`, cls: "fwd" }, line(g.b)], cls: dead },
        { id: "mul", x: 250, y: 85, title: "x₁·x₂", lines: [{ text: `value ${fmt(r.forward["x1*x2"], 4)}`, cls: "fwd" }, line(g["x1*x2"])], cls: dead },
        { id: "add", x: 410, y: 140, title: "z = · + b", lines: [{ text: `value ${fmt(r.forward.z, 4)}`, cls: "fwd" }, line(g.z)], cls: dead },
        { id: "relu", x: 560, y: 140, title: "y = relu(z)", lines: [{ text: `value ${fmt(r.forward.y, 4)}`, cls: "fwd" }, { text: `grad ${fmt(g.y)}`, cls: "grad" }], cls: r.dead ? "current" : "" },
      ];
      const lit = r.dead ? "dead" : "lit";
      drawing.replaceChildren(
        diagram(640, 270, nodes, [
          { from: "x1", to: "mul", cls: lit },
          { from: "x2", to: "mul", cls: lit },
          { from: "mul", to: "add", cls: lit },
          { from: "b", to: "add", cls: lit },
          { from: "add", to: "relu", cls: lit },
        ]),
      );
      values.set("z", r.forward.z);
      values.set("y", r.forward.y);
      values.set("grad_x1", g.x1);
      values.set("grad_x2", g.x2);
      values.set("grad_b", g.b);
      values.set("dead", r.dead);
      chart.update(r.sweep.b.map(Number), [r.sweep.x1.map(plottable), r.sweep.x2.map(plottable), r.sweep.b_grad.map(plottable)], [{ x: r.b, color: COLORS.muted, label: `b = ${fmt(r.b, 3)}` }]);
      rendered(root);
    };
    const load = latest(
      (p: Record<string, number>) => getFigure<DeadRelu>("dead-relu", p, page.busy),
      show,
      (e) => page.error(e),
    );
    b.onChange(() => void load({ b: b.value }));
    void load({ b: b.value });
    return () => chart.destroy();
  },
};
