// The student's progress, kept in the browser (localStorage), one key per item:
//   gradwalk.progress/<lesson id>/<block id>/<item id>  ->  JSON value
// and the score lines the self-checks show. Pure: the store is passed in, so the unit tests
// run it on a Map.

export interface KeyValueStore {
  readonly length: number;
  key(index: number): string | null;
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

const PREFIX = "gradwalk.progress";

export function progressKey(lesson: string, block: string, item: string): string {
  return `${PREFIX}/${lesson}/${block}/${item}`;
}

/** A store in memory: used when localStorage is missing or refuses to write (private mode). */
export function memoryStore(): KeyValueStore {
  const map = new Map<string, string>();
  return {
    get length() {
      return map.size;
    },
    key: (i) => [...map.keys()][i] ?? null,
    getItem: (k) => map.get(k) ?? null,
    setItem: (k, v) => void map.set(k, v),
    removeItem: (k) => void map.delete(k),
  };
}

/** localStorage when it works, else a store in memory (progress then lasts until a reload). */
export function browserStore(): KeyValueStore {
  try {
    const probe = `${PREFIX}/.probe`;
    localStorage.setItem(probe, "1");
    localStorage.removeItem(probe);
    return localStorage;
  } catch {
    return memoryStore();
  }
}

/** One lesson's progress. */
export class Progress {
  constructor(
    private readonly store: KeyValueStore,
    readonly lesson: string,
  ) {}

  get<T>(block: string, item: string): T | null {
    const raw = this.store.getItem(progressKey(this.lesson, block, item));
    if (raw == null) return null;
    try {
      return JSON.parse(raw) as T;
    } catch {
      return null;
    }
  }

  set(block: string, item: string, value: unknown): void {
    try {
      this.store.setItem(progressKey(this.lesson, block, item), JSON.stringify(value));
    } catch {
      // a full or refusing store: the page still works, it just forgets
    }
  }

  remove(block: string, item: string): void {
    this.store.removeItem(progressKey(this.lesson, block, item));
  }

  /** Every key of this lesson (or of one block of it). */
  keys(block?: string): string[] {
    const prefix = block == null ? `${PREFIX}/${this.lesson}/` : `${PREFIX}/${this.lesson}/${block}/`;
    const found: string[] = [];
    for (let i = 0; i < this.store.length; i++) {
      const key = this.store.key(i);
      if (key?.startsWith(prefix)) found.push(key);
    }
    return found;
  }

  /** Forget this lesson's progress (or one block's: a quiz's Retry). */
  clear(block?: string): void {
    for (const key of this.keys(block)) this.store.removeItem(key);
  }

  /** How many items of this lesson hold progress (for the start page). */
  count(): number {
    return this.keys().length;
  }
}

// ---- the score lines --------------------------------------------------------------------

/** A quiz: how many questions are answered and how many of those correctly. */
export function quizScore(
  questions: { id: string; choices: { id: string; correct: boolean }[] }[],
  chosen: (questionId: string) => string | null,
): { total: number; answered: number; correct: number } {
  let answered = 0;
  let correct = 0;
  for (const q of questions) {
    const choice = chosen(q.id);
    const picked = choice == null ? undefined : q.choices.find((c) => c.id === choice);
    if (!picked) continue;
    answered += 1;
    if (picked.correct) correct += 1;
  }
  return { total: questions.length, answered, correct };
}

/** "3 / 5 answered · 2 correct" */
export function scoreLine(score: { total: number; answered: number; correct: number }): string {
  return `${score.answered} / ${score.total} answered · ${score.correct} correct`;
}

export type Mark = "full" | "half" | "zero";

/** The marks a self-mark gives out of a question's `marks`. */
export function marksFor(mark: Mark | null, marks: number): number {
  if (mark === "full") return marks;
  if (mark === "half") return marks / 2;
  return 0;
}

/** An exam block's total: the marks given and the marks there are. */
export function examTotal(
  questions: { id: string; marks: number }[],
  mark: (questionId: string) => Mark | null,
): { got: number; total: number; marked: number } {
  let got = 0;
  let total = 0;
  let marked = 0;
  for (const q of questions) {
    const m = mark(q.id);
    total += q.marks;
    got += marksFor(m, q.marks);
    if (m != null) marked += 1;
  }
  return { got, total, marked };
}

/** 3.5 -> "3.5", 3 -> "3", 2/3 -> "0.67" */
export function formatMarks(value: number): string {
  return String(Number(value.toFixed(2)));
}

/** "Marks: 3.5 / 7" */
export function marksLine(total: { got: number; total: number }): string {
  return `Marks: ${formatMarks(total.got)} / ${formatMarks(total.total)}`;
}

// ---- a lesson's summary, for the start page ----------------------------------------------

const SUMMARY = "gradwalk.summary";

export interface Summary {
  done: number;
  total: number;
}

/** The lesson page writes how many of its self-checks are done; the start page reads it. */
export function saveSummary(store: KeyValueStore, lesson: string, summary: Summary): void {
  try {
    store.setItem(`${SUMMARY}/${lesson}`, JSON.stringify(summary));
  } catch {
    // the summary is a convenience
  }
}

export function readSummary(store: KeyValueStore, lesson: string): Summary | null {
  try {
    const value = JSON.parse(store.getItem(`${SUMMARY}/${lesson}`) ?? "null");
    return value && typeof value.done === "number" && typeof value.total === "number" ? value : null;
  } catch {
    return null;
  }
}

/** "Not started", "5 of 23 self-checks done", "All 23 self-checks done" */
export function summaryLine(summary: Summary | null): string {
  if (!summary || summary.done === 0) return "Not started";
  if (summary.done >= summary.total) return `All ${summary.total} self-checks done`;
  return `${summary.done} of ${summary.total} self-checks done`;
}
