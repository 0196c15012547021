// The start page (/): what gradwalk is, and the suggested path through it: the lessons in order
// (GET /api/lessons), each with its progress, then the lab; the figures after.

import { h } from "../dom";
import { FIGURE_PAGES } from "../figures/index";
import { fetchLessons } from "./api";
import { browserStore, readSummary, summaryLine } from "./progress";
import type { LessonSummary } from "./types";
import "./lessons.css";

function lessonStep(lesson: LessonSummary): HTMLElement {
  const summary = readSummary(browserStore(), lesson.id);
  const state = !summary || summary.done === 0 ? "new" : summary.done >= summary.total ? "done" : "started";
  return h(
    "li",
    { class: `path-step lesson-step ${state}`, "data-lesson": lesson.id },
    h("h3", {}, h("a", { href: `/lessons/${lesson.id}` }, h("span", { class: "step-kicker" }, `Lesson ${lesson.order}`), " ", lesson.title)),
    h("p", { class: "summary" }, lesson.summary),
    lesson.sections.length ? h("p", { class: "sections" }, lesson.sections.map((s) => s.title).join(" · ")) : null,
    lesson.error ? h("p", { class: "lesson-error" }, `This lesson's file has a problem: ${lesson.error}`) : null,
    h("p", { class: `step-progress ${state}`, "data-progress": state }, summaryLine(summary)),
  );
}

export function mountStart(container: HTMLElement): () => void {
  let alive = true;
  const path = h("ol", { class: "path" }, h("li", { class: "path-step loading" }, "Loading the lessons…"));
  const labStep = h(
    "li",
    { class: "path-step lab-step" },
    h("h3", {}, h("a", { href: "/lab" }, h("span", { class: "step-kicker" }, "Then"), " The lab")),
    h("p", { class: "summary" }, "Write your own snippet and step through its backward pass: the ready queue, the dependency counts, the input buffers, the saved tensors and every leaf's ", h("code", {}, ".grad"), ", one node at a time, and check it against real PyTorch."),
  );
  container.replaceChildren(
    h(
      "article",
      { class: "start", "aria-labelledby": "start-title" },
      h(
        "header",
        { class: "start-hero" },
        h("h2", { id: "start-title" }, "Learn how ", h("code", {}, "loss.backward()"), " works by watching it run"),
        h("p", {}, "gradwalk is PyTorch's autograd rebuilt in short, readable Python on NumPy. It builds the same backward graph PyTorch builds, runs PyTorch's engine algorithm over it, and gets the same gradients, in the same order, with the same error messages."),
        h("p", {}, "Here you can watch every step of that engine: which node runs, which gradient it receives, what it sends on and which saved tensors it frees. The lessons teach the ideas from the chain rule up to PyTorch's own engine, with figures to drag, code to run and questions to check yourself; your answers are kept in this browser."),
      ),
      h("section", { class: "start-path", "aria-labelledby": "path-title" }, h("h2", { id: "path-title" }, "A suggested path"), path),
      h(
        "section",
        { class: "start-figures", "aria-labelledby": "figures-title" },
        h("h2", { id: "figures-title" }, "The figures"),
        h("p", {}, "Each lesson embeds these where it needs them; each also has a page of its own."),
        h("ul", { class: "figure-list" }, ...FIGURE_PAGES.map((p) => h("li", {}, h("a", { href: `/figures/${p.id}` }, p.title), h("span", { class: "lede" }, ` ${p.lede}`)))),
      ),
    ),
  );
  void fetchLessons().then(
    (lessons) => {
      if (!alive) return;
      path.replaceChildren(...lessons.map(lessonStep), labStep);
      path.dataset.ready = "1";
    },
    (e) => {
      if (!alive) return;
      path.replaceChildren(h("li", { class: "path-step lesson-error", role: "alert" }, `The lessons could not be listed: ${e instanceof Error ? e.message : String(e)}`), labStep);
      path.dataset.ready = "1";
    },
  );
  return () => {
    alive = false;
  };
}
