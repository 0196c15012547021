// The lesson page (/lessons/<id>): title, summary, a table of contents from the sections, every
// block in order (blocks.ts), the glossary at the end, and the student's progress with a
// "Reset my progress" button. Everything comes from GET /api/lessons/<id>.

import { h } from "../dom";
import { fetchLesson, fetchLessons, LessonFailure } from "./api";
import { renderBlock } from "./blocks";
import type { BlockContext, RenderedBlock } from "./context";
import { browserStore, Progress, saveSummary, summaryLine } from "./progress";
import { plainRich, rich } from "./prose";
import { watchScrollers } from "./scrolls";
import { followTips, glossaryMap } from "./terms";
import type { Lesson } from "./types";
import "./lessons.css";

export interface LessonView {
  teardown(): void;
  /** scroll to a section (the address's #hash) */
  goTo(section: string | null): void;
}

function failurePage(container: HTMLElement, id: string, e: unknown): void {
  const status = e instanceof LessonFailure ? e.status : 0;
  const detail = e instanceof Error ? e.message : String(e);
  container.replaceChildren(
    h(
      "article",
      { class: "lesson lesson-missing", "data-lesson": id, "data-error": String(status || "network") },
      h("h2", { class: "lesson-title" }, status === 404 ? "No such lesson" : "This lesson could not be shown"),
      h("p", { role: "alert", class: "lesson-error" }, status === 404 ? `There is no lesson named “${id}”.` : detail),
      h("p", {}, h("a", { href: "/" }, "Back to the start page")),
    ),
  );
}

export function mountLesson(container: HTMLElement, id: string, section: string | null, onTitle: (title: string) => void): LessonView {
  let alive = true;
  let ready = false;
  let wanted = section;
  const teardowns: (() => void)[] = [];
  container.replaceChildren(h("p", { class: "lesson-loading", role: "status" }, "Loading the lesson…"));
  const onScroll = () => followTips(container);
  window.addEventListener("scroll", onScroll, { passive: true });

  const goTo = (target: string | null) => {
    wanted = target;
    if (!ready) return;
    const el = target ? document.getElementById(target) : null;
    if (el && container.contains(el)) el.scrollIntoView({ block: "start" });
  };

  void fetchLesson(id).then(
    (lesson) => {
      if (!alive) return;
      render(lesson);
      ready = true;
      goTo(wanted);
    },
    (e) => alive && failurePage(container, id, e),
  );

  function render(lesson: Lesson): void {
    const store = browserStore();
    const progress = new Progress(store, lesson.id);
    const glossary = glossaryMap(lesson.glossary);
    const blocks: RenderedBlock[] = [];
    const progressLine = h("p", { class: "lesson-progress", "aria-live": "polite" });
    const summarise = () => {
      let done = 0;
      let total = 0;
      for (const b of blocks) {
        const [d, t] = b.count?.() ?? [0, 0];
        done += d;
        total += t;
      }
      const summary = { done, total };
      saveSummary(store, lesson.id, summary);
      progressLine.textContent = total ? `Your progress: ${summaryLine(summary).toLowerCase()}` : "";
      container.dataset.done = String(done);
      container.dataset.total = String(total);
    };
    const ctx: BlockContext = { lesson, glossary, progress, changed: summarise, onTeardown: (fn) => teardowns.push(fn) };
    const show = (list: typeof lesson.intro) =>
      list.map((block) => {
        const rendered = renderBlock(block, ctx);
        blocks.push(rendered);
        return rendered.el;
      });

    // "Reset my progress" asks first, inline: a line with "Yes, clear it" and "Cancel"
    const reset = h("button", { type: "button", class: "reset-progress", "aria-expanded": "false", "aria-controls": "reset-confirm" }, "Reset my progress");
    const yes = h("button", { type: "button", class: "reset-yes danger" }, "Yes, clear it");
    const cancel = h("button", { type: "button", class: "reset-cancel" }, "Cancel");
    const confirm = h(
      "div",
      { class: "reset-confirm", id: "reset-confirm", role: "group", "aria-label": "Confirm the reset", hidden: true },
      h("span", {}, "Clear every answer, mark, card and worked answer of this lesson?"),
      yes,
      cancel,
    );
    const announce = h("span", { class: "sr-only", "aria-live": "polite" });
    const ask = (open: boolean) => {
      confirm.hidden = !open;
      reset.hidden = open;
      reset.setAttribute("aria-expanded", String(open));
      (open ? cancel : reset).focus();
    };
    reset.addEventListener("click", () => ask(true));
    cancel.addEventListener("click", () => ask(false));
    confirm.addEventListener("keydown", (e) => {
      if (e.key === "Escape") ask(false);
    });
    yes.addEventListener("click", () => {
      progress.clear();
      for (const b of blocks) b.reload?.();
      summarise();
      ask(false);
      announce.textContent = "Your progress in this lesson was cleared.";
    });

    const toc = h(
      "nav",
      { class: "lesson-toc", "aria-label": "Contents of this lesson" },
      h("h3", {}, "Contents"),
      h(
        "ol",
        {},
        ...lesson.sections.map((s) => h("li", {}, h("a", { href: `#${s.id}` }, s.title_html ? plainRich(s.title_html) : s.title))),
        lesson.glossary.length ? h("li", { class: "toc-glossary" }, h("a", { href: "#glossary" }, "Glossary")) : null,
      ),
    );
    const next = h("nav", { class: "lesson-next", "aria-label": "Other lessons" });
    const article = h(
      "article",
      { class: "lesson", "data-lesson": lesson.id, "aria-labelledby": "lesson-title" },
      h(
        "header",
        { class: "lesson-head" },
        h("p", { class: "kicker" }, `Lesson ${lesson.order}`),
        h("h2", { class: "lesson-title", id: "lesson-title" }, lesson.title),
        h("p", { class: "lede" }, lesson.summary),
        h("div", { class: "lesson-actions" }, progressLine, reset, confirm, announce),
      ),
      toc,
      h("div", { class: "lesson-intro" }, show(lesson.intro)),
      ...lesson.sections.map((s) =>
        h("section", { class: "lesson-section", id: s.id, "aria-labelledby": `${s.id}-title` }, h("h2", { id: `${s.id}-title`, class: "section-title" }, s.title_html ? plainRich(s.title_html) : s.title), show(s.blocks)),
      ),
      lesson.glossary.length
        ? h(
            "section",
            { class: "lesson-section lesson-glossary", id: "glossary", "aria-labelledby": "glossary-title" },
            h("h2", { id: "glossary-title", class: "section-title" }, "Glossary"),
            h(
              "dl",
              { class: "glossary-list" },
              ...lesson.glossary.flatMap((g) => [h("dt", { id: `glossary-${g.term.replace(/[^\w-]+/g, "-")}` }, g.term), rich("dd", g.html, glossary)]),
            ),
          )
        : null,
      h("footer", { class: "lesson-foot" }, next, h("p", { class: "computed-with" }, `Every number on this page was computed by ${lesson.computed_with.engine} ${lesson.computed_with.version} when the lesson was served.`)),
    );
    container.replaceChildren(article);
    teardowns.push(watchScrollers(article));
    summarise();
    onTitle(lesson.title);
    article.dataset.ready = "1";

    void fetchLessons().then(
      (all) => {
        const i = all.findIndex((l) => l.id === lesson.id);
        const before = all[i - 1];
        const after = all[i + 1];
        next.replaceChildren(
          before ? h("a", { href: `/lessons/${before.id}`, rel: "prev" }, `← Lesson ${before.order}: ${before.title}`) : h("a", { href: "/" }, "← The start page"),
          after ? h("a", { href: `/lessons/${after.id}`, rel: "next" }, `Lesson ${after.order}: ${after.title} →`) : h("a", { href: "/lab" }, "On to the lab →"),
        );
      },
      () => undefined,
    );
  }

  return {
    teardown() {
      alive = false;
      window.removeEventListener("scroll", onScroll);
      for (const fn of teardowns.splice(0)) fn();
    },
    goTo,
  };
}
