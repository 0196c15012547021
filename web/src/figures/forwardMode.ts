// Figure 7: forward mode. Dual numbers (value, derivative) carried through
// tanh(x**3 + 2*x + 1) one line at a time, each tangent from the op's jvp formula in
// gradwalk, beside reverse mode's answer from backward() (0.15252 at x = 0.5).

import { h } from "../dom";
import { fmt, frame, getFigure, initial, latest, readouts, rendered, slider, type FigurePage } from "./common";

interface ForwardMode {
  x: number;
  lines: { code: string; rule: string; value: number; tangent: number }[];
  value: number;
  tangent: number;
  reverse: number;
  difference: number;
}

export const forwardMode: FigurePage = {
  id: "forward-mode",
  title: "Forward mode",
  lede: "Seed the input as (x, 1) and carry (value, derivative) forward; read dy/dx off the output. Reverse mode gives the same number.",
  mount(root, params) {
    const x = slider({ id: "x", label: "x", min: -2, max: 2, step: 0.05, value: initial(params, "x", 0.5) });
    const reveal = h("button", { type: "button", id: "next-line", class: "primary" }, "Next line");
    const all = h("button", { type: "button", id: "all-lines" }, "All lines");
    const table = h("div", { class: "dual-table" });
    const values = readouts([
      ["tangent", "forward mode: dy/dx (one pass for this input)"],
      ["reverse", "reverse mode: x.grad after y.backward()"],
      ["difference", "|difference|"],
    ]);
    const page = frame(root, [x.el, h("div", { class: "step-buttons" }, reveal, all)], [h("h3", {}, "y = tanh(x**3 + 2*x + 1) with dual numbers"), table], [values.el]);
    let result: ForwardMode | null = null;
    let shown = Infinity;

    function draw(): void {
      if (!result) return;
      const r = result;
      const visible = Math.min(shown, r.lines.length);
      table.replaceChildren(
        h(
          "table",
          { class: "duals" },
          h("thead", {}, h("tr", {}, h("th", {}, "line"), h("th", {}, "dual rule"), h("th", { class: "num" }, "value"), h("th", { class: "num" }, "derivative"))),
          h(
            "tbody",
            {},
            ...r.lines.map((line, i) =>
              h(
                "tr",
                { class: i < visible ? (i === visible - 1 ? "changed" : "") : "pending", "data-line": i },
                h("td", {}, h("code", {}, line.code)),
                h("td", { class: "muted" }, line.rule),
                h("td", { class: "num fwd", "data-raw": line.value }, i < visible ? fmt(line.value) : ""),
                h("td", { class: "num grad", "data-raw": line.tangent }, i < visible ? fmt(line.tangent) : ""),
              ),
            ),
          ),
        ),
      );
      values.set("tangent", r.tangent);
      values.set("reverse", r.reverse);
      values.set("difference", r.difference);
      rendered(root);
    }
    const load = latest(
      (p: Record<string, number>) => getFigure<ForwardMode>("forward-mode", p, page.busy),
      (r: ForwardMode) => {
        page.ok();
        result = r;
        draw();
      },
      (e) => page.error(e),
    );
    x.onChange(() => void load({ x: x.value }));
    reveal.addEventListener("click", () => {
      shown = shown >= (result?.lines.length ?? 0) ? 1 : shown + 1;
      draw();
    });
    all.addEventListener("click", () => {
      shown = Infinity;
      draw();
    });
    void load({ x: x.value });
    return () => undefined;
  },
};
