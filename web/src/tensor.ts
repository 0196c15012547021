// Tensor formatting: how a TENSOR from the API is written on screen. One formatter for every
// panel, the graph and the figures: 4 significant digits, written as Python's f"{v:.4g}" writes
// them, the same as the step texts the server sends ("sent 0.6347 to AddBackward0"). The full
// value goes in a tooltip (`fullNumber`, `fullTensor`). Shapes are written "(2, 3)" everywhere.

import type { NestedData, Num, Tensor } from "./types";

/** Significant digits of every number on the page. */
export const DIGITS = 4;

/** A number as Python's `f"{x:.{digits}g}"` writes it: 0.6347, 1.269, 1e-07, 1.235e+05. */
export function formatNumber(x: Num, digits = DIGITS): string {
  if (typeof x === "string") return x; // "inf", "-inf", "nan"
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const p = Math.max(1, Math.floor(digits));
  const [mantissa, exp] = x.toExponential(p - 1).split("e");
  const exponent = Number(exp);
  const trim = (s: string) => (s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s);
  if (exponent < -4 || exponent >= p) {
    const sign = exponent < 0 ? "-" : "+";
    return `${trim(mantissa)}e${sign}${String(Math.abs(exponent)).padStart(2, "0")}`;
  }
  return trim(x.toFixed(Math.max(0, p - 1 - exponent)));
}

/** The value in full (for tooltips): the shortest text that reads back as the same double. */
export function fullNumber(x: Num): string {
  return typeof x === "string" ? x : String(x);
}

function formatData(data: NestedData, digits: number, maxItems: number, each: (x: Num, d: number) => string): string {
  if (!Array.isArray(data)) return each(data, digits);
  const items =
    data.length > maxItems
      ? [
          ...data.slice(0, Math.ceil(maxItems / 2)).map((d) => formatData(d, digits, maxItems, each)),
          "…",
          ...data.slice(data.length - Math.floor(maxItems / 2)).map((d) => formatData(d, digits, maxItems, each)),
        ]
      : data.map((d) => formatData(d, digits, maxItems, each));
  return `[${items.join(", ")}]`;
}

export interface FormatOptions {
  /** significant digits per number */
  digits?: number;
  /** entries shown per dimension before "…" */
  maxItems?: number;
}

/** "0.6347" for a scalar, "[1, 2, 3]" for a vector; null (no tensor) is "None", as in Python. */
export function formatTensor(t: Tensor | null | undefined, options: FormatOptions = {}): string {
  if (t == null) return "None";
  return formatData(t.data, options.digits ?? DIGITS, options.maxItems ?? 6, formatNumber);
}

/** The tooltip of a tensor: every value in full, with its shape and dtype. */
export function fullTensor(t: Tensor | null | undefined): string {
  if (t == null) return "None";
  const values = formatData(t.data, DIGITS, 64, fullNumber);
  return `${values}\nshape ${shapeText(t)} · ${t.dtype}`;
}

/** A short form for graph labels: scalars in full, bigger tensors by shape and a few entries. */
export function formatShort(t: Tensor | null | undefined): string {
  if (t == null) return "None";
  if (t.shape.length === 0) return formatTensor(t);
  const text = formatTensor(t, { maxItems: 4 });
  return text.length <= 28 ? text : `${shapeText(t)} tensor`;
}

/** "(2, 3)" style shape, "()" for a scalar, "(3,)" for a vector, as Python writes a tuple. */
export function shapeText(t: Tensor | { shape: number[] }): string {
  return t.shape.length === 1 ? `(${t.shape[0]},)` : `(${t.shape.join(", ")})`;
}

/** Shapes in the server's texts ("2x3 tensor") written the page's way ("(2, 3) tensor"). */
export function normalizeShapes(text: string): string {
  return text.replace(/\b(\d+(?:x\d+)+) tensor\b/g, (_m, dims: string) => `(${dims.split("x").join(", ")}) tensor`);
}
