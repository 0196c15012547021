// What every figure page shares: fetching its numbers from the server, controls, readouts
// and uPlot charts. A page never computes a number it shows: it asks /api/figures/<name>.

import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { fetchRetrying } from "../api";
import { h } from "../dom";
import { DIGITS, formatNumber } from "../tensor";
import { teachingBox } from "./lessons";

/** A JSON number from the server, or "inf" / "-inf" / "nan" for non-finite values. */
export type Num = number | string;

export interface FigurePage {
  id: string;
  title: string;
  /** One line under the title. */
  lede: string;
  /** Build the page inside `root`, its controls starting at `params` (named as in
   *  docs/lab-figures-api.md; a lesson's figure block gives them); return its teardown. */
  mount(root: HTMLElement, params?: FigureParams): () => void;
}

/** A figure's starting values, e.g. {inner: "x**2", x: 0.8}. */
export type FigureParams = Record<string, string | number | boolean>;

/** The starting value of one control: `params[key]` when given (as the default's type), else the default. */
export function initial<T extends string | number | boolean>(params: FigureParams | undefined, key: string, fallback: T): T {
  const value = params?.[key];
  if (value == null) return fallback;
  if (typeof fallback === "number") return (Number.isFinite(Number(value)) ? Number(value) : fallback) as T;
  if (typeof fallback === "boolean") return (value === true || value === "true") as T;
  return String(value) as T;
}

export class FigureFailure extends Error {
  /** true when the lab was too busy to answer (not a mistake in the figure's parameters) */
  constructor(message: string, readonly busy = false) {
    super(message);
  }
}

/** Whether an answer means "the lab is busy, ask again": 5xx (a 503 past fetchRetrying's own
 *  tries), or a time limit hit (a figure takes milliseconds; 5 s means the machine was loaded). */
export function busyAnswer(status: number, body: unknown): boolean {
  if (status >= 500 || status === 429) return true;
  const error = body && typeof body === "object" && "error" in body ? (body as { error: { type?: string; message?: string } | null }).error : null;
  return status === 422 && error?.type === "LimitError" && /longer than \d+(\.\d+)? ?s\b/.test(error.message ?? "");
}

/** Waits between busy tries: 1, 2, 4, 8, 8 … s (with up to a quarter more at random). */
const BUSY_WAITS = [1000, 2000, 4000, 8000, 8000, 8000];

/** Called with true while a figure waits to ask the busy lab again, false once it answered. */
export type BusyNotice = (waiting: boolean) => void;

/**
 * `fetch` for a figure, riding out a busy lab: a busy answer (busyAnswer) or no answer at all
 * is asked again after a pause, with `busy(true)` meanwhile, so the page shows "busy,
 * retrying…" instead of an error. After BUSY_WAITS it gives up with a calm FigureFailure.
 */
export async function fetchFigure(url: string, init: RequestInit = {}, busy?: BusyNotice): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    let response: Response | null = null;
    let body: unknown = null;
    try {
      response = await fetchRetrying(url, init);
      if (response.ok) {
        busy?.(false);
        return response;
      }
      body = await response.clone().json().catch(() => null);
      if (!busyAnswer(response.status, body)) {
        busy?.(false);
        return response;
      }
    } catch (e) {
      if (e instanceof DOMException && e.name === "AbortError") throw e;
    }
    if (attempt >= BUSY_WAITS.length) {
      busy?.(false);
      throw new FigureFailure("The lab is still busy. Move a control (or reload) to try again in a moment.", true);
    }
    busy?.(true);
    await new Promise((resolve) => setTimeout(resolve, BUSY_WAITS[attempt] * (1 + Math.random() / 4)));
    if (init.signal?.aborted) throw new DOMException("aborted", "AbortError");
  }
}

export async function getFigure<T>(name: string, params: Record<string, string | number | boolean>, busy?: BusyNotice): Promise<T> {
  const query = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
  const response = await fetchFigure(`/api/figures/${name}?${query}`, { headers: { Accept: "application/json" } }, busy);
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new FigureFailure(body?.detail ?? `HTTP ${response.status}`);
  return body as T;
}

/**
 * Calls `load` with the latest parameters; while a request is in flight, later changes
 * are coalesced into one follow-up request, and answers to stale requests are dropped.
 */
export function latest<P, T>(load: (p: P) => Promise<T>, show: (result: T, p: P) => void, fail: (e: unknown) => void) {
  let running = false;
  let pending: P | null = null;
  async function go(p: P): Promise<void> {
    if (running) {
      pending = p;
      return;
    }
    running = true;
    try {
      const result = await load(p);
      if (pending === null) show(result, p);
    } catch (e) {
      if (pending === null) fail(e);
    } finally {
      running = false;
      const next = pending;
      pending = null;
      if (next !== null) void go(next);
    }
  }
  return go;
}

// ---- numbers on screen -------------------------------------------------------------------

/** A number on a figure: the lab's one formatter (4 significant digits, tensor.ts), unless a
 *  figure asks for fewer digits (a step h written "1e-05"). */
export function fmt(v: Num | null | undefined, digits = DIGITS): string {
  if (v == null) return "—";
  if (typeof v === "string") return v;
  return formatNumber(v, Math.min(digits, DIGITS));
}

/** A number for charts: non-finite strings become gaps. */
export function plottable(v: Num | null): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** For log axes: zero and negative values cannot be drawn, so they become gaps too. */
export function positive(v: Num | null): number | null {
  return typeof v === "number" && v > 0 && Number.isFinite(v) ? v : null;
}

/**
 * A labelled list of values. Each value sits in `[data-value=key]` with the full-precision
 * number in `data-raw`, so tests read exactly what the server sent.
 */
export function readouts(items: [key: string, label: string][]) {
  const dl = h("dl", { class: "readouts" });
  const cells = new Map<string, HTMLElement>();
  for (const [key, label] of items) {
    const dd = h("dd", { "data-value": key, class: "num" }, "—");
    cells.set(key, dd);
    dl.append(h("div", { class: "readout" }, h("dt", {}, label), dd));
  }
  return {
    el: dl,
    set(key: string, value: Num | boolean | null | undefined, text?: string): void {
      const dd = cells.get(key);
      if (!dd) throw new Error(`no readout ${key}`);
      dd.dataset.raw = value == null ? "" : String(value);
      dd.textContent = text ?? (typeof value === "boolean" ? (value ? "yes" : "no") : fmt(value as Num));
      if (typeof value === "number") dd.title = String(value); // the value in full
      else dd.removeAttribute("title");
    },
  };
}

// ---- controls ---------------------------------------------------------------------------

export interface SliderOptions {
  id: string;
  label: string;
  min: number;
  max: number;
  step: number;
  value: number;
  format?: (v: number) => string;
}

export function slider(o: SliderOptions) {
  const input = h("input", { type: "range", id: o.id, min: o.min, max: o.max, step: o.step, value: o.value });
  const out = h("output", { for: o.id, class: "num" });
  const show = () => (out.textContent = (o.format ?? ((v: number) => fmt(v, 4)))(Number(input.value)));
  show();
  input.addEventListener("input", show);
  const el = h("label", { class: "control" }, h("span", { class: "control-label" }, o.label), input, out);
  return {
    el,
    input,
    get value(): number {
      return Number(input.value);
    },
    onChange(fn: () => void) {
      input.addEventListener("input", fn);
    },
  };
}

export function select(id: string, label: string, choices: string[], value: string) {
  const input = h("select", { id }, ...choices.map((c) => h("option", { value: c, selected: c === value }, c)));
  const el = h("label", { class: "control" }, h("span", { class: "control-label" }, label), input);
  return {
    el,
    input,
    get value(): string {
      return input.value;
    },
    onChange(fn: () => void) {
      input.addEventListener("change", fn);
    },
  };
}

export function toggle(id: string, label: string, checked = false) {
  const input = h("input", { type: "checkbox", id, checked });
  const el = h("label", { class: "control check" }, input, h("span", {}, label));
  return {
    el,
    input,
    get value(): boolean {
      return input.checked;
    },
    onChange(fn: () => void) {
      input.addEventListener("change", fn);
    },
  };
}

// ---- the page frame -----------------------------------------------------------------------

/** The usual layout: controls, then a figure area beside readouts, then an error line. */
export function frame(root: HTMLElement, controls: HTMLElement[], figure: HTMLElement[], side: HTMLElement[]) {
  const error = h("p", { class: "figure-error", role: "alert", hidden: true });
  const busy = h("p", { class: "figure-busy", role: "status", hidden: true }, "The lab is busy, retrying…");
  // on the figure's own page (not inline in a lesson): what it teaches, and the lesson using it
  const teach = root.id === "figure" ? teachingBox(root.dataset.figure ?? "") : null;
  root.append(
    ...(teach ? [teach] : []),
    h("div", { class: "figure-controls card" }, ...controls),
    h("div", { class: "figure-body" }, h("div", { class: "figure-main card" }, ...figure), h("div", { class: "figure-side card" }, ...side)),
    busy,
    error,
  );
  return {
    error(e: unknown): void {
      busy.hidden = true;
      delete root.dataset.busy;
      if (e instanceof FigureFailure && e.busy) {
        // not the student's mistake nor the figure's: said calmly, in the busy line
        busy.hidden = false;
        busy.textContent = e.message;
        root.dataset.busy = "gave-up";
        return;
      }
      error.hidden = false;
      error.textContent = e instanceof Error ? e.message : String(e);
    },
    ok(): void {
      error.hidden = true;
      busy.hidden = true;
      delete root.dataset.busy;
    },
    /** while waiting to ask the busy lab again */
    busy(waiting: boolean): void {
      busy.hidden = !waiting;
      busy.textContent = "The lab is busy, retrying…";
      if (waiting) {
        error.hidden = true;
        root.dataset.busy = "1";
      } else delete root.dataset.busy;
    },
  };
}

/** Tests wait for `data-renders` to go up: one more each time server numbers are drawn. */
export function rendered(root: HTMLElement): void {
  root.dataset.renders = String(Number(root.dataset.renders ?? "0") + 1);
}

// ---- charts -----------------------------------------------------------------------------

export interface Marker {
  x: number;
  y?: number | null; // no y: a vertical line at x
  color: string;
  label?: string;
  textOnly?: boolean; // just the label, near the top of the plot
  align?: "left" | "right"; // which side of x the label goes
}

export interface ChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  series: { label: string; color: string; dash?: number[]; points?: boolean }[];
  logX?: boolean;
  logY?: boolean;
  height?: number;
}

const COLORS = { fwd: "#1d4ed8", grad: "#c2410c", muted: "#6b7280", ok: "#15803d", purple: "#7c3aed" };
export { COLORS };

/** Log axes: a label and a grid line per decade only ("1e-8"), not uPlot's 2…9 in between. */
const LOG_AXIS: Partial<uPlot.Axis> = {
  // Our own ticks, one per decade (every k-th when there are many): uPlot's own loop forever on
  // small decades (1e-29 + 1e-29 is not 2e-29 in floating point).
  // Labels need ~52 px side by side on an x axis, ~24 px stacked on a y axis.
  splits: (u, axis, min, max) => {
    const lo = Math.ceil(Math.log10(min) - 1e-9);
    const hi = Math.floor(Math.log10(max) + 1e-9);
    if (!Number.isFinite(lo) || !Number.isFinite(hi) || hi < lo) return [];
    const across = (u.axes[axis].side ?? 0) % 2 === 0;
    const room = (across ? u.bbox.width : u.bbox.height) / devicePixelRatio;
    const fits = Math.max(2, Math.floor(room / (across ? 52 : 24)));
    const k = Math.max(1, Math.ceil((hi - lo + 1) / fits));
    const out: number[] = [];
    for (let e = lo; e <= hi; e += k) out.push(Number(`1e${e}`));
    return out;
  },
  filter: (_u, splits) => splits.map((v) => (v > 0 && Math.abs(Math.log10(v) - Math.round(Math.log10(v))) < 1e-9 ? v : null)),
  values: (_u, splits) => splits.map((v) => (v == null ? "" : `1e${Math.round(Math.log10(v))}`)),
};

/** A log scale's range: whole decades, written as exact literals ("1e-30"). uPlot's log ticks
 * step from the range's minimum and loop forever when it is not an exact decade (Math.pow(10, -30)
 * is 9.999999999999999e-31) or is below 1e-32, so the range is also kept inside [1e-30, 1e30]. */
function logRange(_u: uPlot, min: number | null, max: number | null): uPlot.Range.MinMax {
  if (min == null || max == null || !(min > 0) || !(max > 0) || !Number.isFinite(min) || !Number.isFinite(max)) return [0.1, 10];
  const clamp = (e: number) => Math.max(-30, Math.min(30, e));
  const lo = clamp(Math.floor(Math.log10(min)));
  const hi = Math.max(clamp(Math.ceil(Math.log10(max))), lo + 1);
  return [Number(`1e${lo}`), Number(`1e${hi}`)];
}

/** A uPlot line chart that fits its container's width and draws markers on top. */
export function lineChart(parent: HTMLElement, o: ChartOptions) {
  const holder = h("div", { class: "chart", "data-chart": o.title });
  parent.append(holder);
  let markers: Marker[] = [];
  const width = () => Math.max(260, Math.floor(holder.getBoundingClientRect().width || parent.clientWidth || 600));
  const opts: uPlot.Options = {
    title: o.title,
    width: width(),
    height: o.height ?? 260,
    scales: {
      x: { time: false, distr: o.logX ? 3 : 1, ...(o.logX ? { range: logRange } : {}) },
      y: { distr: o.logY ? 3 : 1, ...(o.logY ? { range: logRange } : {}) },
    },
    axes: [
      { label: o.xLabel, stroke: "#374151", grid: { stroke: "#eef0f3" }, ...(o.logX ? LOG_AXIS : {}) },
      { label: o.yLabel, stroke: "#374151", grid: { stroke: "#eef0f3" }, size: 62, ...(o.logY ? LOG_AXIS : {}) },
    ],
    series: [
      { label: o.xLabel },
      ...o.series.map((s) => ({
        label: s.label,
        stroke: s.color,
        width: 2,
        dash: s.dash,
        points: { show: s.points ?? false, size: 5, fill: s.color },
        spanGaps: false,
      })),
    ],
    legend: { show: true, live: false },
    cursor: { drag: { x: false, y: false } },
    hooks: {
      draw: [
        (u: uPlot) => {
          const ctx = u.ctx;
          ctx.save();
          for (const m of markers) {
            const cx = u.valToPos(m.x, "x", true);
            ctx.strokeStyle = m.color;
            ctx.fillStyle = m.color;
            ctx.lineWidth = 1.5 * devicePixelRatio;
            if (m.textOnly) {
              // nothing but the label below
            } else if (m.y == null) {
              ctx.setLineDash([4 * devicePixelRatio, 3 * devicePixelRatio]);
              ctx.beginPath();
              ctx.moveTo(cx, u.bbox.top);
              ctx.lineTo(cx, u.bbox.top + u.bbox.height);
              ctx.stroke();
              ctx.setLineDash([]);
            } else {
              const cy = u.valToPos(m.y, "y", true);
              ctx.beginPath();
              ctx.arc(cx, cy, 5 * devicePixelRatio, 0, 2 * Math.PI);
              ctx.fill();
            }
            if (m.label) {
              ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
              const top = u.bbox.top + (m.textOnly ? 30 : 14) * devicePixelRatio;
              const ty = m.y == null || m.textOnly ? top : u.valToPos(m.y, "y", true) - 9 * devicePixelRatio;
              const right = m.align ? m.align === "right" : cx > u.bbox.left + u.bbox.width * 0.7;
              ctx.textAlign = right ? "right" : "left";
              ctx.fillText(m.label, cx + (right ? -6 : 6) * devicePixelRatio, ty);
            }
          }
          ctx.restore();
        },
      ],
    },
  };
  const empty: uPlot.AlignedData = [[], ...o.series.map(() => [])];
  const plot = new uPlot(opts, empty, holder);
  const onResize = () => plot.setSize({ width: width(), height: o.height ?? 260 });
  const observer = new ResizeObserver(onResize);
  observer.observe(parent);
  // A log axis cannot draw 0, negative values, or values beyond [1e-30, 1e30] (the axis range):
  // the chart leaves those points out and says so under the chart, never silently.
  const note = h("p", { class: "chart-note", hidden: true });
  holder.after(note);
  return {
    plot,
    update(x: number[], ys: (number | null)[][], newMarkers: Marker[] = []): void {
      markers = newMarkers;
      let shown = ys;
      if (o.logY) {
        let zero = 0, negative = 0, tiny = 0, huge = 0;
        shown = ys.map((series) =>
          series.map((v) => {
            if (v == null) return null;
            if (v === 0) zero++;
            else if (v < 0) negative++;
            else if (v < 1e-30) tiny++;
            else if (v > 1e30) huge++;
            else return v;
            return null;
          }),
        );
        const parts = [
          zero && `${zero} exactly 0`,
          negative && `${negative} negative`,
          tiny && `${tiny} below 1e-30`,
          huge && `${huge} above 1e30`,
        ].filter(Boolean);
        note.hidden = parts.length === 0;
        note.textContent = parts.length ? `Not drawn on the log axis: ${parts.join(", ")} (see the numbers beside the chart).` : "";
        holder.dataset.notDrawn = String(zero + negative + tiny + huge);
      }
      plot.setData([x, ...shown] as uPlot.AlignedData);
    },
    destroy(): void {
      observer.disconnect();
      plot.destroy();
    },
  };
}
