// The editor panel: CodeMirror 6 with Python highlighting, Ctrl+Enter to run, and line marks
// for the error line and for the line that created the node being stepped.

import { EditorView, basicSetup } from "codemirror";
import { python } from "@codemirror/lang-python";
import { Prec, StateEffect, StateField, type Extension } from "@codemirror/state";
import { Decoration, type DecorationSet, WidgetType, keymap } from "@codemirror/view";

export interface Editor {
  getText(): string;
  setText(text: string): void;
  /** Mark one line (1-based) as the error line, with the message under it (and the column it
   *  points at), and scroll it into view; null clears it. */
  markError(line: number | null, message?: string, col?: number | null): void;
  /** Mark the source line of what is being stepped, or clear it with null. */
  markActive(line: number | null): void;
  focus(): void;
}

type Marks = { error: number | null; active: number | null; message: string; col: number | null };
const setMarks = StateEffect.define<Partial<Marks>>();

const errorLine = Decoration.line({ class: "cm-error-line" });
const activeLine = Decoration.line({ class: "cm-op-line" });

/** The error's message, written in the editor right under the line it is about. */
class ErrorWidget extends WidgetType {
  constructor(readonly message: string, readonly col: number | null) {
    super();
  }
  eq(other: ErrorWidget): boolean {
    return other.message === this.message && other.col === this.col;
  }
  toDOM(): HTMLElement {
    const el = document.createElement("div");
    el.className = "cm-error-message";
    el.setAttribute("role", "note");
    el.textContent = `${this.col != null ? `↑ col ${this.col}: ` : "↑ "}${this.message}`;
    return el;
  }
}

/** The two marks live in editor state so they move with edits; any edit clears the error mark. */
const marksField = StateField.define<{ marks: Marks; deco: DecorationSet }>({
  create: () => ({ marks: { error: null, active: null, message: "", col: null }, deco: Decoration.none }),
  update(value, tr) {
    let marks = value.marks;
    if (tr.docChanged) marks = { error: null, active: null, message: "", col: null };
    for (const effect of tr.effects) if (effect.is(setMarks)) marks = { ...marks, ...effect.value };
    if (marks === value.marks && !tr.docChanged) return value;
    const doc = tr.state.doc;
    const ranges = [];
    const valid = (line: number | null): line is number => line != null && line >= 1 && line <= doc.lines;
    // Decorations must be added in document order; one line may carry both marks.
    const lines = [
      ...(valid(marks.active) ? [{ line: marks.active, deco: activeLine }] : []),
      ...(valid(marks.error) ? [{ line: marks.error, deco: errorLine }] : []),
    ].sort((a, b) => a.line - b.line);
    for (const { line, deco } of lines) ranges.push(deco.range(doc.line(line).from));
    if (valid(marks.error) && marks.message) {
      const widget = Decoration.widget({ widget: new ErrorWidget(marks.message, marks.col), block: true, side: 1 });
      ranges.push(widget.range(doc.line(marks.error).to));
    }
    return { marks, deco: Decoration.set(ranges, true) };
  },
  provide: (field) => EditorView.decorations.from(field, (value) => value.deco),
});

const theme = EditorView.theme({
  "&": { height: "100%", fontSize: "14px" },
  ".cm-scroller": { fontFamily: "var(--mono)", lineHeight: "1.5" },
  ".cm-content": { padding: "8px 0" },
  ".cm-error-line": { backgroundColor: "var(--error-bg)", boxShadow: "inset 3px 0 0 var(--error)" },
  ".cm-op-line": { backgroundColor: "var(--current-bg)" },
  ".cm-error-message": {
    margin: "0 0 2px 6px", padding: "2px 8px", borderRadius: "4px", fontFamily: "var(--sans)", fontSize: "13px",
    whiteSpace: "pre-wrap", color: "var(--error)", backgroundColor: "var(--error-bg)", borderLeft: "3px solid var(--error)",
  },
});

export interface EditorOptions {
  /** Measure the lines even while the editor is out of sight (a lesson's many snippets). */
  measureOffscreen?: boolean;
}

/**
 * Measure every line of `view` now, even out of sight. CodeMirror measures only what is in the
 * window and estimates the rest; until an editor scrolls into view its line numbers sit at the
 * estimated heights (~16-26 px) beside 21 px code lines, which a full-page screenshot or a quick
 * scroll shows. CodeMirror measures everything this way while printing (its viewState.printing);
 * the flag is internal, so without it nothing happens.
 */
function measureWhole(view: EditorView): void {
  const inner = view as unknown as { viewState?: { printing?: boolean }; measure?: () => void };
  const viewState = inner.viewState;
  if (!view.dom.isConnected || !viewState || typeof viewState.printing !== "boolean" || typeof inner.measure !== "function") return;
  viewState.printing = true;
  try {
    inner.measure.call(view);
  } finally {
    viewState.printing = false;
  }
  view.requestMeasure();
}

/** Measure `view` whole once it is in the document, when the fonts arrive, and after the
 *  window changes width (lines wrap anew). */
function measureOffscreen(view: EditorView): void {
  let frames = 0;
  const whenConnected = () => {
    if (view.dom.isConnected) {
      measureWhole(view);
      void document.fonts?.ready.then(() => measureWhole(view));
    } else if (++frames < 600) requestAnimationFrame(whenConnected);
  };
  requestAnimationFrame(whenConnected);
  let timer = 0;
  let width = window.innerWidth;
  window.addEventListener("resize", () => {
    if (window.innerWidth === width) return;
    width = window.innerWidth;
    clearTimeout(timer);
    timer = window.setTimeout(() => measureWhole(view), 150);
  });
}

export function createEditor(parent: HTMLElement, text: string, onRun: () => void, options: EditorOptions = {}): Editor {
  const dataset = parent.dataset;
  const runKeys: Extension = Prec.highest(
    keymap.of([
      { key: "Mod-Enter", run: () => (onRun(), true) },
      { key: "Shift-Enter", run: () => (onRun(), true) },
    ]),
  );
  const view = new EditorView({
    doc: text,
    parent,
    extensions: [
      runKeys,
      basicSetup,
      python(),
      marksField,
      theme,
      EditorView.lineWrapping,
      // tabindex: axe counts a scrolled editor (.cm-scroller) as reachable only with it
      EditorView.contentAttributes.of({ "aria-label": "Python snippet (Ctrl+Enter runs it)", tabindex: "0" }),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) delete dataset.errorLine;
      }),
    ],
  });

  if (options.measureOffscreen) measureOffscreen(view);

  return {
    getText: () => view.state.doc.toString(),
    setText(newText: string) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: newText } });
    },
    markError(line, message = "", col = null) {
      const valid = line != null && line >= 1 && line <= view.state.doc.lines;
      const effects: StateEffect<unknown>[] = [setMarks.of({ error: line, message, col })];
      if (valid) effects.push(EditorView.scrollIntoView(view.state.doc.line(line).from, { y: "center" }));
      view.dispatch({ effects });
      if (line == null) delete dataset.errorLine;
      else dataset.errorLine = String(line);
    },
    markActive(line) {
      view.dispatch({ effects: setMarks.of({ active: line }) });
    },
    focus: () => view.focus(),
  };
}
