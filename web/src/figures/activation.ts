// Figure 2: activation slopes. Drag the input: the curve, its local derivative, and the
// number backward multiplies the gradient by. The depth slider stacks n layers and shows
// the gradient that reaches the input (vanishing for sigmoid, steady for relu).

import { h } from "../dom";
import { COLORS, fmt, frame, getFigure, initial, latest, lineChart, plottable, readouts, rendered, select, slider, type FigurePage, type Num } from "./common";

interface Activation {
  name: string;
  x: number;
  depth: number;
  value: Num;
  slope: Num;
  curve: { x: Num[]; y: Num[]; slope: Num[] };
  stacked: { n: number[]; grad: Num[] };
}

export const activation: FigurePage = {
  id: "activation",
  title: "Activation slopes",
  lede: "The slope of the curve at the input is the local derivative: exactly the number backward multiplies the gradient by.",
  mount(root, params) {
    const name = select("activation", "activation", ["sigmoid", "tanh", "relu", "gelu", "leaky_relu"], initial(params, "name", "sigmoid"));
    const x = slider({ id: "x", label: "input x", min: -6, max: 6, step: 0.05, value: initial(params, "x", 1) });
    const depth = slider({ id: "depth", label: "layers n", min: 1, max: 30, step: 1, value: initial(params, "depth", 10), format: (v) => String(v) });
    const curveBox = h("div", { class: "chart-box" });
    const depthBox = h("div", { class: "chart-box" });
    const values = readouts([
      ["value", "act(x)"],
      ["slope", "local derivative act′(x): backward multiplies by"],
      ["deep", "gradient after n layers"],
    ]);
    const note = h("p", { class: "caption" });
    const page = frame(root, [name.el, x.el, depth.el], [curveBox, depthBox], [values.el, note]);
    const curve = lineChart(curveBox, {
      title: "the curve and its slope",
      xLabel: "x",
      yLabel: "value",
      series: [
        { label: "act(x)", color: COLORS.fwd },
        { label: "act′(x)", color: COLORS.grad },
      ],
    });
    const stacked = lineChart(depthBox, {
      title: "d aₙ / dx through n stacked layers (log scale)",
      xLabel: "layers n",
      yLabel: "gradient",
      logY: true,
      series: [{ label: "gradient at the input", color: COLORS.grad, points: true }],
      height: 220,
    });

    const show = (r: Activation) => {
      page.ok();
      values.set("value", r.value);
      values.set("slope", r.slope);
      const deep = r.stacked.grad[r.stacked.grad.length - 1];
      values.set("deep", deep, `${fmt(deep)} (n = ${r.depth})`);
      note.textContent =
        r.name === "gelu" ? "gelu is the exact form x·Φ(x) (F.gelu)." : "";
      curve.update(
        r.curve.x.map(Number),
        [r.curve.y.map(plottable), r.curve.slope.map(plottable)],
        [
          { x: r.x, y: plottable(r.value), color: COLORS.fwd },
          { x: r.x, y: plottable(r.slope), color: COLORS.grad, label: `slope ${fmt(r.slope, 4)}` },
        ],
      );
      stacked.update(r.stacked.n, [r.stacked.grad.map(plottable)]); // the chart says what it cannot draw
      rendered(root);
    };
    const load = latest(
      (p: Record<string, string | number>) => getFigure<Activation>("activation", p, page.busy),
      show,
      (e) => page.error(e),
    );
    const refresh = () => void load({ name: name.value, x: x.value, depth: depth.value });
    for (const c of [name, x, depth]) c.onChange(refresh);
    refresh();
    return () => {
      curve.destroy();
      stacked.destroy();
    };
  },
};
