// Figure 1: the chain rule. Choose the inner g and the outer f, drag x: the inner slope g'(x),
// the outer slope f'(u) at u = g(x), their product, gradwalk's composite slope and a
// finite-difference estimate. Every number comes from GET /api/figures/chain-rule.

import { h } from "../dom";
import { COLORS, frame, getFigure, initial, latest, lineChart, plottable, readouts, rendered, select, slider, type FigurePage, type Num } from "./common";

interface ChainRule {
  inner: string;
  outer: string;
  inner_choices: string[];
  outer_choices: string[];
  x: number;
  u: Num;
  y: Num;
  inner_slope: Num;
  outer_slope: Num;
  product: Num;
  composite: Num;
  finite_difference: Num;
  h: number;
  curve: { x: Num[]; u: Num[]; y: Num[]; slope: Num[]; tangent: Num[] };
}

const INNER = ["x**2", "sin(x)", "3*x + 1", "exp(x)"];
const OUTER = ["sin(u)", "u**3", "tanh(u)", "exp(-u)"];

export const chainRule: FigurePage = {
  id: "chain-rule",
  title: "The chain rule",
  lede: "y = f(g(x)): the inner slope g′(x) times the outer slope f′(u), taken at u = g(x), is the composite slope.",
  mount(root, params) {
    const inner = select("inner", "inner g(x)", INNER, initial(params, "inner", "x**2"));
    const outer = select("outer", "outer f(u)", OUTER, initial(params, "outer", "sin(u)"));
    const x = slider({ id: "x", label: "x", min: -2, max: 2, step: 0.01, value: initial(params, "x", 0.8) });
    const title = h("p", { class: "formula" });
    const chartBox = h("div", { class: "chart-box" });
    const values = readouts([
      ["u", "u = g(x)"],
      ["inner_slope", "inner slope g′(x)"],
      ["outer_slope", "outer slope f′(u) at u = g(x)"],
      ["product", "product g′(x)·f′(u)"],
      ["composite", "gradwalk: dy/dx by backward()"],
      ["finite_difference", "finite difference (central)"],
    ]);
    const note = h("p", { class: "caption" });
    const page = frame(root, [inner.el, outer.el, x.el], [title, chartBox], [values.el, note]);
    const chart = lineChart(chartBox, {
      title: "y = f(g(x)) and its tangent at x",
      xLabel: "x",
      yLabel: "y",
      series: [
        { label: "f(g(x))", color: COLORS.fwd },
        { label: "u = g(x)", color: COLORS.muted, dash: [4, 4] },
        { label: "tangent, slope = product", color: COLORS.grad },
      ],
    });

    const show = (r: ChainRule) => {
      page.ok();
      title.textContent = `y = ${r.outer.replace(/u/g, `(${r.inner})`)}`;
      for (const key of ["u", "inner_slope", "outer_slope", "product", "composite", "finite_difference"] as const) values.set(key, r[key]);
      note.textContent = `The finite difference uses h = ${r.h}: (y(x+h) − y(x−h)) / 2h, from gradwalk's forward values.`;
      chart.update(
        r.curve.x.map(Number),
        [r.curve.y.map(plottable), r.curve.u.map(plottable), r.curve.tangent.map(plottable)],
        [{ x: r.x, y: plottable(r.y), color: COLORS.grad, label: `x = ${r.x}` }],
      );
      rendered(root);
    };
    const load = latest(
      (p: Record<string, string | number>) => getFigure<ChainRule>("chain-rule", p),
      show,
      (e) => page.error(e),
    );
    const refresh = () => void load({ inner: inner.value, outer: outer.value, x: x.value });
    inner.onChange(refresh);
    outer.onChange(refresh);
    x.onChange(refresh);
    refresh();
    return () => chart.destroy();
  },
};
