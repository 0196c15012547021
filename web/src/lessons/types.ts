// The lessons' JSON (docs/lessons-api.md) as types. Every field ending in `html` is the
// server's own rendering of the lesson's Markdown.

export interface SectionRef {
  id: string;
  title: string;
}

export interface LessonSummary {
  id: string;
  title: string;
  summary: string;
  order: number;
  sections: SectionRef[];
  /** in GET /api/lessons: the problem of a lesson whose file cannot be read */
  error?: string;
}

export interface ProseBlock {
  type: "prose";
  id: string;
  html: string;
}
export interface FigureBlock {
  type: "figure";
  id: string;
  figure: string;
  params: Record<string, string | number | boolean>;
  caption_html: string | null;
}
export interface SnippetBlock {
  type: "snippet";
  id: string;
  code: string;
  title: string | null;
  step: boolean;
}
export interface ListingBlock {
  type: "listing";
  id: string;
  code: string;
  language: string | null;
  output: string;
}
export interface CodeBlock {
  type: "code";
  id: string;
  code: string;
  language: string | null;
}
export interface QuizChoice {
  id: string;
  html: string;
  correct: boolean;
  feedback_html: string;
}
export interface QuizQuestion {
  id: string;
  question_html: string;
  choices: QuizChoice[];
}
export interface QuizBlock {
  type: "quiz";
  id: string;
  questions: QuizQuestion[];
}
export interface ExamQuestion {
  id: string;
  question_html: string;
  answer_html: string;
  marks: number;
}
export interface ExamBlock {
  type: "exam";
  id: string;
  questions: ExamQuestion[];
}
export interface Card {
  id: string;
  front_html: string;
  back_html: string;
}
export interface CardsBlock {
  type: "cards";
  id: string;
  cards: Card[];
}
export interface ExerciseBlock {
  type: "exercise";
  id: string;
  /** plain text, for labels */
  title: string;
  title_html?: string;
  problem_html: string;
  answer_html: string;
  snippet: string | null;
}
export interface RecordingSide {
  engine: string;
  version: string;
  source: "live" | "shipped";
  rows: Record<string, unknown>[];
}
export interface RecordingBlock {
  type: "recording";
  id: string;
  title: string;
  kind: "hook-order" | "profile";
  code: string;
  pytorch: RecordingSide;
  gradwalk: RecordingSide;
}

export type Block =
  | ProseBlock
  | FigureBlock
  | SnippetBlock
  | ListingBlock
  | CodeBlock
  | QuizBlock
  | ExamBlock
  | CardsBlock
  | ExerciseBlock
  | RecordingBlock;

export interface Section extends SectionRef {
  /** the title as HTML (math, code), when the server sends it */
  title_html?: string;
  blocks: Block[];
}

export interface GlossaryEntry {
  term: string;
  html: string;
}

export interface Lesson extends LessonSummary {
  intro: Block[];
  sections: Section[];
  glossary: GlossaryEntry[];
  numbers: Record<string, string>;
  computed_with: { engine: string; version: string };
}
