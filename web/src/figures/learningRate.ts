// Figure 4: the learning rate. Gradient descent on L = (w·x + b − t)²; the loss per step
// and the path of w. Past the critical rate it diverges, while every gradient gradwalk
// computes still equals the closed form 2·(w·x + b − t)·x.

import { h } from "../dom";
import { COLORS, fmt, frame, getFigure, initial, latest, lineChart, plottable, readouts, rendered, slider, type FigurePage, type Num } from "./common";

interface LearningRate {
  lr: number;
  steps: number;
  w_star: number;
  critical_lr: number;
  contraction: number;
  diverges: boolean;
  step: number[];
  w: Num[];
  loss: Num[];
  grad: Num[];
  grad_closed_form: Num[];
  max_grad_difference: Num;
}

export const learningRate: FigurePage = {
  id: "learning-rate",
  title: "Learning rate",
  lede: "w ← w − lr · dL/dw on L = (w·3 + 1 − 5)². Raise the rate and the updates diverge, though every gradient stays exact.",
  mount(root, params) {
    const lr = slider({ id: "lr", label: "learning rate", min: 0.005, max: 0.2, step: 0.005, value: initial(params, "lr", 0.05), format: (v) => v.toFixed(3) });
    const steps = slider({ id: "steps", label: "steps", min: 5, max: 60, step: 1, value: initial(params, "steps", 30), format: (v) => String(v) });
    const lossBox = h("div", { class: "chart-box" });
    const pathBox = h("div", { class: "chart-box" });
    const values = readouts([
      ["critical_lr", "critical rate 2 / L″(w)"],
      ["contraction", "|1 − lr·L″| per step"],
      ["diverges", "diverges?"],
      ["final_loss", "final loss"],
      ["final_w", "final w (w* = 4/3)"],
      ["max_grad_difference", "max |gradwalk grad − closed form|"],
    ]);
    const table = h("div", { class: "steps-table" });
    const page = frame(root, [lr.el, steps.el], [lossBox, pathBox], [values.el, table]);
    const lossChart = lineChart(lossBox, {
      title: "loss per step (log scale)",
      xLabel: "step",
      yLabel: "loss",
      logY: true,
      series: [{ label: "loss", color: COLORS.grad, points: true }],
      height: 220,
    });
    const pathChart = lineChart(pathBox, {
      title: "the path of w",
      xLabel: "step",
      yLabel: "w",
      series: [
        { label: "w", color: COLORS.fwd, points: true },
        { label: "w* = 4/3", color: COLORS.muted, dash: [5, 4] },
      ],
      height: 220,
    });

    const show = (r: LearningRate) => {
      page.ok();
      values.set("critical_lr", r.critical_lr);
      values.set("contraction", r.contraction);
      values.set("diverges", r.diverges);
      values.set("final_loss", r.loss[r.loss.length - 1]);
      values.set("final_w", r.w[r.w.length - 1]);
      values.set("max_grad_difference", r.max_grad_difference);
      table.replaceChildren(
        h(
          "table",
          { "aria-label": "first steps" },
          h("thead", {}, h("tr", {}, h("th", {}, "step"), h("th", { class: "num" }, "w"), h("th", { class: "num" }, "dL/dw"), h("th", { class: "num" }, "closed form"))),
          h(
            "tbody",
            {},
            ...r.step.slice(0, 6).map((i) =>
              h("tr", {}, h("td", {}, String(i)), h("td", { class: "num" }, fmt(r.w[i], 5)), h("td", { class: "num grad" }, fmt(r.grad[i], 5)), h("td", { class: "num" }, fmt(r.grad_closed_form[i], 5))),
            ),
          ),
        ),
      );
      lossChart.update(r.step, [r.loss.map(plottable)]);
      pathChart.update(r.step, [r.w.map(plottable), r.step.map(() => r.w_star)]);
      rendered(root);
    };
    const load = latest(
      (p: Record<string, number>) => getFigure<LearningRate>("learning-rate", p, page.busy),
      show,
      (e) => page.error(e),
    );
    const refresh = () => void load({ lr: lr.value, steps: steps.value });
    lr.onChange(refresh);
    steps.onChange(refresh);
    refresh();
    return () => {
      lossChart.destroy();
      pathChart.destroy();
    };
  },
};
