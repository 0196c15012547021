// What every block's renderer gets: the lesson, its glossary, the student's progress, and a
// hook to call after progress changed (the page recounts its summary).

import type { Progress } from "./progress";
import type { Glossary } from "./terms";
import type { Lesson } from "./types";

export interface BlockContext {
  lesson: Lesson;
  glossary: Glossary;
  progress: Progress;
  /** call after the block saved or cleared progress */
  changed(): void;
  /** register a teardown for when the page is left */
  onTeardown(fn: () => void): void;
}

/** A rendered block: its element, and how to reload its state from progress (after a reset). */
export interface RenderedBlock {
  el: HTMLElement;
  /** re-read progress (after "Reset my progress") */
  reload?(): void;
  /** [done, total] self-check items, for the progress summary */
  count?(): [number, number];
}

let uid = 0;
/** An id unique in the page, for aria references. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${++uid}`;
}
