// The profiler view: POST /api/profile runs the editor's snippet under gradwalk.profiler and
// answers a timeline. Forward ops and backward nodes sit on one time axis, in the order they
// started; a line links each forward op to the backward node it created (same sequence number),
// and under each backward node are the ops its formula ran. "Download Chrome trace" saves
// POST /api/profile/trace for chrome://tracing or Perfetto.

import { empty, fill, h } from "../dom";
import type { ApiError } from "../types";
import type { ToolPanel } from "./compare";
import { className, isMaxSeq, MAX_SEQ_FULL, seqText } from "./names";

export interface ProfileEvent {
  id: number;
  name: string;
  kind: "forward" | "backward" | "inner";
  seq: number | null;
  start_us: number;
  dur_us: number;
  parent: number | null; // the backward node an inner op ran in
}
export interface ProfileResponse {
  events: ProfileEvent[];
  links: { seq: number; forward: number; backward: number }[];
  error: ApiError | null;
  total_us: number;
}

const SVG = "http://www.w3.org/2000/svg";
const SLOT = 132; // px per top-level event: an ordinal axis, so short ops stay readable
const BOX_H = 34;
const ROW_FWD = 34;
const ROW_BWD = 120;
const INNER_H = 18;

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text != null) node.textContent = text;
  return node;
}

function short(name: string, max = 19): string {
  return name.length <= max ? name : `${name.slice(0, max - 1)}…`;
}

function duration(us: number): string {
  return us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`;
}

export function renderTimeline(el: HTMLElement, r: ProfileResponse): void {
  const top = r.events.filter((e) => e.kind !== "inner").sort((a, b) => a.start_us - b.start_us);
  const inner = new Map<number, ProfileEvent[]>();
  for (const e of r.events) if (e.kind === "inner" && e.parent != null) inner.set(e.parent, [...(inner.get(e.parent) ?? []), e]);
  const maxInner = Math.max(0, ...[...inner.values()].map((v) => v.length));
  // Each lane counts its own boxes in start order (the backward pass starts after the last
  // forward op), so both lanes start at the left edge: half the width, on a phone too.
  const forward = top.filter((e) => e.kind === "forward");
  const backward = top.filter((e) => e.kind !== "forward");
  const slots = Math.max(1, forward.length, backward.length);
  const room = el.clientWidth || 600;
  const slot = Math.max(96, Math.min(SLOT, Math.floor((room - 20) / slots)));
  const width = slots * slot + 20;
  const height = ROW_BWD + BOX_H + 12 + maxInner * INNER_H + 10;
  const chart = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "timeline", role: "img", "aria-label": "profiler timeline" });
  chart.append(svg("text", { x: 4, y: 14, class: "lane" }, "forward ops, in the order they ran"), svg("text", { x: 4, y: ROW_BWD - 8, class: "lane" }, "backward nodes and the ops inside them, in the order they ran"));
  const x = new Map<number, number>();
  forward.forEach((e, i) => x.set(e.id, 10 + i * slot));
  backward.forEach((e, i) => x.set(e.id, 10 + i * slot));
  const chars = Math.max(10, Math.floor((slot - 18) / 6.6));
  for (const link of r.links) {
    const a = x.get(link.forward);
    const b = x.get(link.backward);
    if (a == null || b == null) continue;
    const x1 = a + (slot - 12) / 2;
    const x2 = b + (slot - 12) / 2;
    chart.append(
      svg("path", {
        d: `M${x1},${ROW_FWD + BOX_H} C${x1},${ROW_FWD + BOX_H + 40} ${x2},${ROW_BWD - 40} ${x2},${ROW_BWD}`,
        class: "seq-link",
        "data-seq": link.seq,
      }),
    );
  }
  for (const e of top) {
    const left = x.get(e.id)!;
    const y = e.kind === "forward" ? ROW_FWD : ROW_BWD;
    const g = svg("g", { class: `event ${e.kind}`, "data-seq": e.seq ?? "", "data-name": e.name });
    g.append(svg("title", {}, `${e.name}\nseq ${isMaxSeq(e.seq, false) ? MAX_SEQ_FULL : seqText(e.seq, "—")} · ${duration(e.dur_us)}`));
    g.append(svg("rect", { x: left, y, width: slot - 12, height: BOX_H, rx: 5 }));
    g.append(svg("text", { x: left + 6, y: y + 14, class: "ev-name" }, short(className(e.name), chars)));
    g.append(svg("text", { x: left + 6, y: y + 28, class: "ev-meta" }, `seq ${seqText(e.seq, "—")} · ${duration(e.dur_us)}`));
    chart.append(g);
    (inner.get(e.id) ?? []).forEach((op, i) => {
      const iy = ROW_BWD + BOX_H + 6 + i * INNER_H;
      const ig = svg("g", { class: "event inner", "data-name": op.name });
      ig.append(svg("title", {}, `${op.name} inside ${e.name} · ${duration(op.dur_us)}`));
      ig.append(svg("rect", { x: left + 8, y: iy, width: slot - 28, height: INNER_H - 3, rx: 3 }));
      ig.append(svg("text", { x: left + 13, y: iy + 11, class: "ev-inner" }, short(op.name, chars - 2)));
      chart.append(ig);
    });
  }
  fill(
    el,
    h("p", { class: "caption" }, `${forward.length} forward ops, ${backward.length} backward nodes, ${r.links.length} linked by sequence number · ${duration(r.total_us)} in all. Each row is in start order, not to scale; hover or tap a box for its duration.`),
    h("div", { class: "timeline-scroll" }, chart),
    r.error ? h("p", { class: "compare-error" }, `${r.error.type}: ${r.error.message}`) : null,
  );
}

async function post(url: string, source: string): Promise<Response> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify({ source }),
  });
  if (!response.ok) {
    const body = await response.json().catch(() => null);
    const e = body?.error;
    if (e?.type && e?.message) {
      const where = e.line != null ? ` (line ${e.line}${e.col != null ? `, col ${e.col}` : ""})` : "";
      throw new Error(`${e.type}${where}: ${e.message}`);
    }
    throw new Error(body?.detail ?? `HTTP ${response.status}`);
  }
  return response;
}

const PROFILE_EMPTY = "Press “Profile” to run the snippet under gradwalk.profiler.";

export function createProfilePanel(el: HTMLElement, run: HTMLButtonElement, download: HTMLButtonElement, getSource: () => string): ToolPanel {
  let request = 0;
  let shownFor: string | null = null;
  run.addEventListener("click", async () => {
    const mine = ++request;
    const source = getSource();
    run.setAttribute("aria-busy", "true");
    try {
      const body = (await (await post("/api/profile", source)).json()) as ProfileResponse;
      if (mine !== request) return;
      if (body.events.length) renderTimeline(el, body);
      else fill(el, empty("The profiler recorded nothing: the snippet made no tensor ops."));
    } catch (e) {
      if (mine === request) fill(el, h("p", { class: "compare-error" }, e instanceof Error ? e.message : String(e)));
    } finally {
      if (mine === request) shownFor = source;
      run.setAttribute("aria-busy", "false");
      el.dataset.runs = String(Number(el.dataset.runs ?? "0") + 1);
    }
  });
  download.addEventListener("click", async () => {
    try {
      const blob = await (await post("/api/profile/trace", getSource())).blob();
      const link = h("a", { href: URL.createObjectURL(blob), download: "gradwalk-trace.json" });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 1000);
    } catch (e) {
      fill(el, h("p", { class: "compare-error" }, e instanceof Error ? e.message : String(e)));
    }
  });
  return {
    sourceChanged(source) {
      if (shownFor === null || shownFor === source) return;
      request++;
      shownFor = null;
      fill(el, empty(PROFILE_EMPTY));
    },
  };
}
