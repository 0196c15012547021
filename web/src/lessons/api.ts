// The lessons' API client: GET /api/lessons and GET /api/lessons/<id> (docs/lessons-api.md).

import type { Lesson, LessonSummary } from "./types";

export class LessonFailure extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

async function getJson<T>(url: string): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, { headers: { Accept: "application/json" } });
  } catch (e) {
    throw new LessonFailure(`The server could not be reached (${String(e)}).`, 0);
  }
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const detail = body && typeof body === "object" && "detail" in body ? String(body.detail) : `HTTP ${response.status}`;
    throw new LessonFailure(detail, response.status);
  }
  return body as T;
}

let listing: Promise<LessonSummary[]> | null = null;

/** The lessons in order; asked once per page load (a failure is asked again next time). */
export function fetchLessons(): Promise<LessonSummary[]> {
  listing ??= getJson<LessonSummary[]>("/api/lessons").catch((e) => {
    listing = null;
    throw e;
  });
  return listing;
}

export function fetchLesson(id: string): Promise<Lesson> {
  return getJson<Lesson>(`/api/lessons/${encodeURIComponent(id)}`);
}
