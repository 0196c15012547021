// Tensor formatting: how a TENSOR from the API is written on screen.

import type { NestedData, Num, Tensor } from "./types";

/** A number as the lab writes it: at most `digits` decimals, trailing zeros dropped. */
export function formatNumber(x: Num, digits = 4): string {
  if (typeof x === "string") return x; // "inf", "-inf", "nan"
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return "0";
  const ax = Math.abs(x);
  if (ax >= 1e5 || ax < 10 ** -digits) {
    const [mantissa, exponent] = x.toExponential(Math.min(digits, 3)).split("e");
    return `${mantissa.replace(/\.?0+$/, "")}e${exponent.replace("+", "")}`;
  }
  const fixed = x.toFixed(digits);
  const trimmed = fixed.includes(".") ? fixed.replace(/0+$/, "").replace(/\.$/, "") : fixed;
  return trimmed === "-0" ? "0" : trimmed;
}

function formatData(data: NestedData, digits: number, maxItems: number): string {
  if (!Array.isArray(data)) return formatNumber(data, digits);
  const items =
    data.length > maxItems
      ? [
          ...data.slice(0, Math.ceil(maxItems / 2)).map((d) => formatData(d, digits, maxItems)),
          "…",
          ...data.slice(data.length - Math.floor(maxItems / 2)).map((d) => formatData(d, digits, maxItems)),
        ]
      : data.map((d) => formatData(d, digits, maxItems));
  return `[${items.join(", ")}]`;
}

export interface FormatOptions {
  /** decimals per number */
  digits?: number;
  /** entries shown per dimension before "…" */
  maxItems?: number;
}

/** "0.6347" for a scalar, "[1, 2, 3]" for a vector; null (no tensor) is "None", as in Python. */
export function formatTensor(t: Tensor | null | undefined, options: FormatOptions = {}): string {
  if (t == null) return "None";
  return formatData(t.data, options.digits ?? 4, options.maxItems ?? 6);
}

/** A short form for graph labels: scalars in full, bigger tensors by shape and a few entries. */
export function formatShort(t: Tensor | null | undefined): string {
  if (t == null) return "None";
  if (t.shape.length === 0) return formatTensor(t);
  const text = formatTensor(t, { digits: 3, maxItems: 4 });
  return text.length <= 28 ? text : `${shapeText(t)} tensor`;
}

/** "(2, 3)" style shape, "()" for a scalar. */
export function shapeText(t: Tensor): string {
  return t.shape.length === 1 ? `(${t.shape[0]},)` : `(${t.shape.join(", ")})`;
}
