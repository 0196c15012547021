// Source edits behind the "retain_graph" checkbox and the "backward() again" button. The page
// always sends exactly what the editor shows, so these edit the editor's text.

import type { RunResponse } from "./types";

const BACKWARD_CALL = /\.backward\(([^()]*)\)/;

/** Turn retain_graph=True on or off in the first backward() call of the source. */
export function setRetainGraph(source: string, retain: boolean): string {
  return source.replace(BACKWARD_CALL, (_call, args: string) => {
    const rest = args
      .split(",")
      .map((a) => a.trim())
      .filter((a) => a && !/^retain_graph\s*=/.test(a));
    if (retain) rest.push("retain_graph=True");
    return `.backward(${rest.join(", ")})`;
  });
}

/** Whether the first backward() call passes retain_graph=True. */
export function hasRetainGraph(source: string): boolean {
  const m = BACKWARD_CALL.exec(source);
  return !!m && /retain_graph\s*=\s*True/.test(m[1]);
}

/** The tensor the last backward() was called on: from the last pass, else from the source. */
export function lastBackwardTarget(source: string, run: RunResponse | null): string | null {
  const call = run?.passes.at(-1)?.call;
  const fromRun = call ? /^\s*(.+?)\.backward\(/.exec(call) : null;
  if (fromRun) return fromRun[1];
  const all = [...source.matchAll(/([A-Za-z_][\w.]*)\.backward\(/g)];
  return all.length ? all[all.length - 1][1] : null;
}
