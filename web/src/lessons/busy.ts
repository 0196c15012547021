// When a snippet's run failed because the lab was busy, not because of the snippet: such a run
// is asked again (snippet.ts) with "busy, retrying…" on screen instead of an error.

import type { ApiError } from "../types";

/** Whether a failed run is the lab being busy (worth asking again), not the snippet's fault. */
export function isBusy(e: ApiError): boolean {
  if (e.type === "NetworkError" || e.type === "Busy") return true;
  if (e.type.startsWith("HTTP ")) return Number(e.type.slice(5)) >= 500 || Number(e.type.slice(5)) === 429;
  if (e.status != null && (e.status === 503 || e.status === 504)) return true;
  // lesson snippets run in milliseconds: a wall-time limit means the machine was loaded
  return e.type === "LimitError" && /longer than \d+(\.\d+)? ?s\b/.test(e.message);
}

/** How long to wait before the next try after `attempt` busy answers (1, 2, 4, 8 s, then 8 s). */
export function busyDelay(attempt: number): number {
  return Math.min(8000, 1000 * 2 ** Math.max(0, attempt - 1));
}

/** The most busy answers a Run rides out before it says so and waits for the student. */
export const BUSY_TRIES = 6;
