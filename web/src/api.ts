// The API client: the only module that talks to the server (docs/lab-api.md).

import type { ApiError, Mode, Preset, RunRequest, RunResponse } from "./types";

/** Raised for anything that is not a well-formed 200 answer; the page shows it like an ERROR. */
export class ApiFailure extends Error {
  constructor(readonly error: ApiError) {
    super(error.message);
  }
}

/**
 * `fetch`, retried while the lab is full: a 503 with `Retry-After` (docs/lab-api.md, "Under
 * load") is asked again after that many seconds, plus up to half as much again at random so
 * that a class does not come back all at once; at most `tries` times in all. Nothing is lost:
 * a refused request did no work on the server.
 */
export async function fetchRetrying(input: RequestInfo | URL, init?: RequestInit, tries = 6): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(input, init);
    const retryAfter = response.headers.get("Retry-After");
    if (response.status !== 503 || retryAfter === null || attempt >= tries) return response;
    const seconds = Number(retryAfter);
    const wait = (Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 30) : 1) * 1000;
    await new Promise((resolve) => setTimeout(resolve, wait * (1 + Math.random() / 2)));
    if (init?.signal?.aborted) return response;
  }
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiFailure({
      type: `HTTP ${response.status}`,
      message: text.slice(0, 500) || response.statusText,
      line: null,
      col: null,
    });
  }
}

function failure(status: number, body: unknown): ApiFailure {
  // A refused snippet (docs/lab-api.md: 400/413/422) carries its error with line and column:
  // shown as the snippet's error, on its line.
  const error = body && typeof body === "object" && "error" in body ? (body as { error: unknown }).error : null;
  if (error && typeof error === "object" && typeof (error as ApiError).type === "string" && typeof (error as ApiError).message === "string") {
    const e = error as ApiError;
    return new ApiFailure({ type: e.type, message: e.message, line: e.line ?? null, col: e.col ?? null, status });
  }
  // Starlette's HTTPException gives {"detail": ...}; anything else is shown as it came.
  const detail =
    body && typeof body === "object" && "detail" in body ? (body as { detail: unknown }).detail : body;
  return new ApiFailure({
    type: `HTTP ${status}`,
    message: typeof detail === "string" ? detail : JSON.stringify(detail),
    line: null,
    col: null,
  });
}

export async function fetchPresets(): Promise<Preset[]> {
  const response = await fetch("/api/presets", { headers: { Accept: "application/json" } });
  const body = await readJson(response);
  if (!response.ok || !Array.isArray(body)) throw failure(response.status, body);
  return body as Preset[];
}

/** POST /api/run; `sequenceStart` > 0 continues the sequence numbers of an earlier run. */
export async function runSnippet(source: string, mode: Mode, sequenceStart = 0, earlierPasses = 0): Promise<RunResponse> {
  const request: RunRequest = { source, mode };
  if (sequenceStart) request.sequence_start = sequenceStart;
  if (earlierPasses) request.earlier_passes = earlierPasses;
  let response: Response;
  try {
    response = await fetchRetrying("/api/run", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(request),
    });
  } catch (e) {
    throw new ApiFailure({ type: "NetworkError", message: String(e), line: null, col: null });
  }
  const body = await readJson(response);
  if (!response.ok || !body || typeof body !== "object" || !("passes" in body)) {
    throw failure(response.status, body);
  }
  return body as RunResponse;
}
