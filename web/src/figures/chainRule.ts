// Figure 1: the chain rule. Choose the inner g and the outer f, drag x: the inner slope g'(x),
// the outer slope f'(u) at u = g(x), their product, gradwalk's composite slope and a
// finite-difference estimate. Every number comes from GET /api/figures/chain-rule.

import { h } from "../dom";
import { COLORS, fmt, frame, getFigure, initial, latest, lineChart, plottable, readouts, rendered, select, slider, type FigurePage, type Num } from "./common";

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
      title: "y = f(g(x)) and u = g(x), with their tangents at x (drag the dot)",
      xLabel: "x",
      yLabel: "y, u",
      series: [
        { label: "y = f(g(x))", color: COLORS.fwd },
        { label: "u = g(x)", color: COLORS.muted, dash: [4, 4] },
        { label: "composite tangent, slope dy/dx", color: COLORS.grad },
        { label: "inner tangent, slope g′(x)", color: COLORS.purple },
      ],
    });
    const outerBox = h("div", { class: "chart-box" });
    chartBox.after(outerBox);
    const outerChart = lineChart(outerBox, {
      title: "y = f(u) against u, with its tangent at u = g(x)",
      xLabel: "u",
      yLabel: "y",
      series: [
        { label: "y = f(u)", color: COLORS.fwd },
        { label: "outer tangent, slope f′(u)", color: COLORS.ok },
      ],
      height: 200,
    });
    const agree = h("p", { class: "caption agree" });
    note.after(agree);

    // A tangent line y0 + slope·(t − t0), drawn near the point only (so it never sets the scale).
    const tangent = (ts: number[], t0: number, y0: number | null, slope: number | null, reach: number) =>
      ts.map((t) => (y0 == null || slope == null || Math.abs(t - t0) > reach ? null : y0 + slope * (t - t0)));

    const show = (r: ChainRule) => {
      page.ok();
      title.textContent = `y = ${r.outer.replace(/u/g, `(${r.inner})`)}`;
      for (const key of ["u", "inner_slope", "outer_slope", "product", "composite", "finite_difference"] as const) values.set(key, r[key]);
      note.textContent = `The finite difference uses h = ${r.h}: (y(x+h) − y(x−h)) / 2h, from gradwalk's forward values.`;
      const fd = plottable(r.finite_difference);
      const composite = plottable(r.composite);
      const product = plottable(r.product);
      const gap = fd != null && composite != null ? Math.abs(fd - composite) : null;
      agree.textContent =
        gap == null
          ? ""
          : `inner × outer = ${fmt(product)}, backward() = ${fmt(composite)}, finite difference = ${fmt(fd)}: they differ by ${fmt(gap)}, the finite difference's own error.`;
      const xs = r.curve.x.map(Number);
      const y0 = plottable(r.y);
      const u0 = plottable(r.u);
      chart.update(
        xs,
        [
          r.curve.y.map(plottable),
          r.curve.u.map(plottable),
          tangent(xs, r.x, y0, composite, 0.6),
          tangent(xs, r.x, u0, plottable(r.inner_slope), 0.6),
        ],
        [
          { x: r.x, y: y0, color: COLORS.grad, label: `x = ${fmt(r.x)}` },
          { x: r.x, y: u0, color: COLORS.purple },
        ],
      );
      // f against u: the curve's (u, y) pairs, in order of u (what uPlot needs)
      const pairs = r.curve.u
        .map((u, i) => [plottable(u), plottable(r.curve.y[i])] as const)
        .filter((p): p is readonly [number, number] => p[0] != null && p[1] != null)
        .sort((a, b) => a[0] - b[0])
        .filter((p, i, all) => i === 0 || p[0] > all[i - 1][0]);
      const us = pairs.map((p) => p[0]);
      const spanU = us.length ? us[us.length - 1] - us[0] : 1;
      outerChart.update(
        us,
        [pairs.map((p) => p[1]), u0 == null ? us.map(() => null) : tangent(us, u0, y0, plottable(r.outer_slope), Math.max(0.15 * spanU, 1e-9))],
        u0 == null ? [] : [{ x: u0, y: y0, color: COLORS.ok, label: `u = ${fmt(u0)}` }],
      );
      rendered(root);
    };

    // Drag the point on the curve itself (mouse, pen or finger): x follows the pointer.
    const over = chart.plot.over;
    chartBox.classList.add("chart-drag");
    let dragging = false;
    const moveTo = (event: PointerEvent) => {
      const rect = over.getBoundingClientRect();
      const value = chart.plot.posToVal(event.clientX - rect.left, "x");
      const step = Number(x.input.step) || 0.01;
      const clamped = Math.max(Number(x.input.min), Math.min(Number(x.input.max), Math.round(value / step) * step));
      const next = Number(clamped.toFixed(2));
      if (next === x.value) return;
      x.input.value = String(next);
      x.input.dispatchEvent(new Event("input", { bubbles: true }));
    };
    over.addEventListener("pointerdown", (e) => {
      dragging = true;
      over.setPointerCapture?.(e.pointerId);
      moveTo(e);
    });
    over.addEventListener("pointermove", (e) => dragging && moveTo(e));
    const stop = () => (dragging = false);
    over.addEventListener("pointerup", stop);
    over.addEventListener("pointercancel", stop);

    const load = latest(
      (p: Record<string, string | number>) => getFigure<ChainRule>("chain-rule", p, page.busy),
      show,
      (e) => page.error(e),
    );
    const refresh = () => void load({ inner: inner.value, outer: outer.value, x: x.value });
    inner.onChange(refresh);
    outer.onChange(refresh);
    x.onChange(refresh);
    refresh();
    return () => {
      chart.destroy();
      outerChart.destroy();
    };
  },
};
