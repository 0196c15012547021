// Figure 5: XOR. The seeds' 2-4-1 tanh MLP trained by gradwalk (`steps` steps, 100 unless a
// lesson asks for more or fewer); the loss curve is drawn live from the server's stream (one
// JSON line per step), the decision boundary, with its axes x₁ and x₂, when training ends.

import { h } from "../dom";
import { COLORS, fetchFigure, fmt, frame, initial, plottable, readouts, rendered, slider, type FigurePage, type Num } from "./common";
import { lineChart } from "./common";

interface StepEvent {
  step: number;
  loss: Num;
}
interface DoneEvent {
  done: true;
  final_loss: Num;
  points: { x: number[][]; y: number[]; prediction: Num[] };
  boundary: { axis: Num[]; z: Num[][] };
}

/** Reads newline-delimited JSON from a fetch body, calling `each` per line as it arrives. */
export async function readLines(response: Response, each: (event: unknown) => void): Promise<void> {
  if (!response.body) throw new Error("the server sent no body");
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let carry = "";
  for (;;) {
    const { value, done } = await reader.read();
    carry += decoder.decode(value ?? new Uint8Array(), { stream: !done });
    const lines = carry.split("\n");
    carry = lines.pop() ?? "";
    for (const line of lines) if (line.trim()) each(JSON.parse(line));
    if (done) break;
  }
  if (carry.trim()) each(JSON.parse(carry));
}

/** The model's output over the plane, blue for +1 (XOR true) and orange for −1. */
function drawBoundary(canvas: HTMLCanvasElement, done: DoneEvent): void {
  const room = (canvas.closest(".boundary-box")?.clientWidth ?? 344) - 24; // the x₂ label's column
  const size = Math.max(120, Math.min(320, room));
  const ratio = devicePixelRatio;
  canvas.width = size * ratio;
  canvas.height = size * ratio;
  canvas.style.width = `${size}px`;
  canvas.style.height = `${size}px`;
  const ctx = canvas.getContext("2d")!;
  const axis = done.boundary.axis.map(Number);
  const n = axis.length;
  const cell = (size * ratio) / n;
  for (let row = 0; row < n; row++) {
    for (let col = 0; col < n; col++) {
      const v = plottable(done.boundary.z[row][col]) ?? 0;
      const alpha = Math.min(1, Math.abs(v)) * 0.55;
      ctx.fillStyle = v >= 0 ? `rgba(29, 78, 216, ${alpha})` : `rgba(194, 65, 12, ${alpha})`;
      // row 0 is the lowest y: draw it at the bottom
      ctx.fillRect(col * cell, (n - 1 - row) * cell, cell + 0.5, cell + 0.5);
    }
  }
  const toPx = (v: number) => ((v - axis[0]) / (axis[n - 1] - axis[0])) * (n - 1) * cell + cell / 2;
  // ticks at 0 and 1 on both axes (the XOR points' coordinates), written inside the plot's edge
  ctx.fillStyle = "#1f2933";
  ctx.font = `${11 * ratio}px system-ui, sans-serif`;
  for (const v of [0, 1]) {
    const at = toPx(v);
    ctx.textAlign = "center";
    ctx.textBaseline = "bottom";
    ctx.fillText(String(v), at, size * ratio - 2 * ratio);
    ctx.textAlign = "left";
    ctx.textBaseline = "middle";
    ctx.fillText(String(v), 3 * ratio, size * ratio - at);
  }
  done.points.x.forEach(([px, py], i) => {
    const cx = toPx(px);
    const cy = size * ratio - toPx(py);
    ctx.beginPath();
    ctx.arc(cx, cy, 9 * ratio, 0, 2 * Math.PI);
    ctx.fillStyle = done.points.y[i] > 0 ? COLORS.fwd : COLORS.grad;
    ctx.fill();
    ctx.lineWidth = 2 * ratio;
    ctx.strokeStyle = "#fff";
    ctx.stroke();
  });
}

export const xor: FigurePage = {
  id: "xor",
  title: "XOR",
  lede: "A 2-4-1 tanh MLP learns XOR: loss = Σ (model(x) − y)², steps of p ← p − lr·p.grad (100 to start with), all in gradwalk on the server.",
  mount(root, params) {
    const lr = slider({ id: "lr", label: "learning rate", min: 0.01, max: 0.5, step: 0.01, value: initial(params, "lr", 0.05), format: (v) => v.toFixed(2) });
    const seed = slider({ id: "seed", label: "initial weights (seed)", min: 0, max: 20, step: 1, value: initial(params, "seed", 0), format: (v) => String(v) });
    const stepCount = slider({ id: "steps", label: "training steps", min: 1, max: 500, step: 1, value: Math.round(initial(params, "steps", 100)), format: (v) => String(v) });
    const train = h("button", { type: "button", class: "primary", id: "train" });
    const label = () => (train.textContent = `Train ${stepCount.value} steps`);
    label();
    const chartBox = h("div", { class: "chart-box" });
    const canvas = h("canvas", { class: "boundary", role: "img", "aria-label": "decision boundary over the plane x₁, x₂ from −0.5 to 1.5" });
    const plot = h(
      "div",
      { class: "boundary-plot" },
      h("span", { class: "axis-label y" }, "x₂ (second input)"),
      canvas,
      h("span", { class: "axis-label x" }, "x₁ (first input)"),
    );
    const boundaryBox = h("div", { class: "boundary-box" }, h("h3", {}, "Decision boundary after training"), plot, h("p", { class: "caption" }, "blue: the model says +1, orange: −1; dots are the four XOR points (0,0) (0,1) (1,0) (1,1)"));
    const values = readouts([
      ["step", "step"],
      ["loss", "loss"],
      ["final_loss", "final loss"],
      ["predictions", "model(x) at (0,0) (0,1) (1,0) (1,1)"],
    ]);
    const page = frame(root, [lr.el, seed.el, stepCount.el, train], [chartBox, boundaryBox], [values.el]);
    const chart = lineChart(chartBox, {
      title: "loss per step, streamed as gradwalk trains",
      xLabel: "step",
      yLabel: "loss",
      series: [{ label: "loss", color: COLORS.grad }],
      height: 240,
    });

    let run = 0;
    let controller: AbortController | null = null;
    async function start(): Promise<void> {
      const mine = ++run;
      controller?.abort();
      controller = new AbortController();
      root.dataset.training = "1";
      const steps: number[] = [];
      const losses: (number | null)[] = [];
      values.set("final_loss", null);
      values.set("predictions", null);
      canvas.getContext("2d")?.clearRect(0, 0, canvas.width, canvas.height);
      try {
        const query = new URLSearchParams({ lr: String(lr.value), seed: String(seed.value), steps: String(stepCount.value) });
        const response = await fetchFigure(`/api/figures/xor/stream?${query}`, { signal: controller.signal }, page.busy);
        if (!response.ok) throw new Error((await response.json()).detail ?? `HTTP ${response.status}`);
        await readLines(response, (event) => {
          if (mine !== run) return;
          if ((event as DoneEvent).done) {
            const done = event as DoneEvent;
            values.set("final_loss", done.final_loss);
            values.set("predictions", done.points.prediction.join(","), done.points.prediction.map((p) => fmt(p, 3)).join("  "));
            drawBoundary(canvas, done);
            root.dataset.training = "0";
            rendered(root);
            return;
          }
          const e = event as StepEvent;
          steps.push(e.step);
          losses.push(plottable(e.loss));
          values.set("step", e.step);
          values.set("loss", e.loss);
          root.dataset.streamed = String(steps.length);
          chart.update(steps, [losses]);
        });
        page.ok();
      } catch (e) {
        if (mine === run && !(e instanceof DOMException && e.name === "AbortError")) page.error(e);
      }
    }
    train.addEventListener("click", () => void start());
    lr.onChange(() => void start());
    seed.onChange(() => void start());
    stepCount.onChange(() => {
      label();
      void start();
    });
    void start();
    return () => {
      controller?.abort();
      chart.destroy();
    };
  },
};
