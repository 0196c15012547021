// Figure 3: gradient check. The error of one-sided and central differences against
// gradwalk's exact gradient as h sweeps 1e-1 … 1e-14, on log-log axes: truncation on the
// right, cancellation on the left, the best h between them.

import { h } from "../dom";
import { COLORS, fmt, frame, getFigure, initial, latest, lineChart, plottable, positive, readouts, rendered, select, slider, type FigurePage, type Num } from "./common";

interface Best {
  h: number;
  error: number;
  index: number;
}
interface GradientCheck {
  fn: string;
  x: number;
  exact: number;
  h: number[];
  one_sided_error: Num[];
  central_error: Num[];
  best_one_sided: Best;
  best_central: Best;
  at: { h: number; one_sided: Num; central: Num; one_sided_error: Num; central_error: Num };
  epsilon: number;
}

export const gradientCheck: FigurePage = {
  id: "gradient-check",
  title: "Gradient check",
  lede: "Autodiff gives the exact slope; a finite difference is a secant. Too big an h is truncation, too small is cancellation.",
  mount(root, params) {
    const fn = select("fn", "f(x)", ["tanh(x**3 + 2*x + 1)", "exp(x) * sin(x)", "log(1 + x**2)"], initial(params, "fn", "tanh(x**3 + 2*x + 1)"));
    const x = slider({ id: "x", label: "x", min: -2, max: 2, step: 0.05, value: initial(params, "x", 0.5) });
    const step = slider({ id: "log-h", label: "step h", min: -14, max: -1, step: 0.25, value: Math.log10(initial(params, "h", 1e-5)), format: (v) => `1e${v}` });
    const chartBox = h("div", { class: "chart-box" });
    const values = readouts([
      ["exact", "gradwalk's exact gradient"],
      ["one_sided", "one-sided (f(x+h) − f(x)) / h"],
      ["one_sided_error", "its error"],
      ["central", "central (f(x+h) − f(x−h)) / 2h"],
      ["central_error", "its error"],
      ["best_one_sided", "best h, one-sided"],
      ["best_central", "best h, central"],
    ]);
    const note = h("p", { class: "caption" });
    const page = frame(root, [fn.el, x.el, step.el], [chartBox], [values.el, note]);
    const chart = lineChart(chartBox, {
      title: "|finite difference − exact| against h (log-log)",
      xLabel: "h",
      yLabel: "error",
      logX: true,
      logY: true,
      series: [
        { label: "one-sided", color: COLORS.fwd, points: true },
        { label: "central", color: COLORS.grad, points: true },
      ],
      height: 320,
    });

    const show = (r: GradientCheck) => {
      page.ok();
      values.set("exact", r.exact);
      for (const key of ["one_sided", "one_sided_error", "central", "central_error"] as const) values.set(key, r.at[key]);
      values.set("best_one_sided", r.best_one_sided.h, `h ≈ ${fmt(r.best_one_sided.h, 2)} (error ${fmt(r.best_one_sided.error, 2)})`);
      values.set("best_central", r.best_central.h, `h ≈ ${fmt(r.best_central.h, 2)} (error ${fmt(r.best_central.error, 2)})`);
      note.textContent =
        `Right of the best h the error is truncation (∝ h one-sided, ∝ h² central); left of it, f(x+h) and ` +
        `f(x−h) agree in almost every digit and the subtraction leaves rounding noise (∝ ε/h, ε = ${fmt(r.epsilon, 3)}). ` +
        `An error of exactly 0 (exact agreement) cannot be drawn on the log axis: the note under the chart counts those points.`;
      // uPlot wants x ascending: the server sweeps h downwards, so reverse both
      const order = [...r.h.keys()].reverse();
      chart.update(
        order.map((i) => r.h[i]),
        [order.map((i) => plottable(r.one_sided_error[i])), order.map((i) => plottable(r.central_error[i]))],
        [
          { x: r.at.h, color: COLORS.muted, label: `h = ${fmt(r.at.h, 2)}` },
          { x: r.best_central.h, y: positive(r.best_central.error), color: COLORS.grad, label: "best h, central" },
          { x: r.best_one_sided.h, y: positive(r.best_one_sided.error), color: COLORS.fwd, label: "best h, one-sided" },
          { x: r.best_central.h / 10, color: COLORS.muted, label: "← cancellation side", textOnly: true, align: "right" },
          { x: r.best_central.h * 10, color: COLORS.muted, label: "truncation side →", textOnly: true, align: "left" },
        ],
      );
      rendered(root);
    };
    const load = latest(
      (p: Record<string, string | number>) => getFigure<GradientCheck>("gradient-check", p, page.busy),
      show,
      (e) => page.error(e),
    );
    const refresh = () => void load({ fn: fn.value, x: x.value, h: Number((10 ** step.value).toPrecision(6)) });
    for (const c of [fn, x, step]) c.onChange(refresh);
    refresh();
    return () => chart.destroy();
  },
};
