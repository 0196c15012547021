// Error panel: the snippet's error (syntax, forbidden construct, shape) and any pass's error,
// e.g. PyTorch's "Trying to backward through the graph a second time".

import { fill, h } from "../dom";
import type { ApiError, RunResponse } from "../types";

export interface ShownError {
  error: ApiError;
  /** "pass 2, y.backward()" for a pass's error */
  where: string | null;
  /** the editor line to mark */
  line: number | null;
}

export function collectErrors(run: RunResponse | null, failure: ApiError | null): ShownError[] {
  const shown: ShownError[] = [];
  if (failure) shown.push({ error: failure, where: null, line: failure.line });
  if (run?.error) shown.push({ error: run.error, where: null, line: run.error.line });
  run?.passes.forEach((pass, p) => {
    if (pass.error) {
      shown.push({ error: pass.error, where: `pass ${p + 1}, ${pass.call}`, line: pass.error.line ?? pass.line });
    }
  });
  return shown;
}

function position(e: ApiError): string {
  if (e.line == null) return "";
  return e.col != null ? ` at line ${e.line}, col ${e.col}` : ` at line ${e.line}`;
}

export function renderErrors(el: HTMLElement, errors: ShownError[]): void {
  el.hidden = errors.length === 0;
  fill(
    el,
    errors.map((s) =>
      h(
        "div",
        { class: "error-item", "data-type": s.error.type, "data-line": s.line ?? null },
        s.error.status != null && s.error.status >= 400 && s.error.status < 500 && s.error.line != null
          ? h("span", { class: "refused" }, "The lab did not run this snippet: ")
          : null,
        h("strong", {}, s.error.type),
        h("span", { class: "where" }, position(s.error), s.where ? ` (${s.where})` : ""),
        h("pre", {}, s.error.message),
      ),
    ),
  );
}
