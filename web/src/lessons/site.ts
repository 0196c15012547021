// The whole page's routes (router.ts) wired to what they show: the start page, a lesson, a
// figure page, or the lab. The lab's sections stay alive (only hidden) while another page is
// shown, so its state survives a visit to a lesson or a figure.

import { h } from "../dom";
import { buildMenu, figureById, mountFigurePage } from "../figures/index";
import { routeKey, startRouter, type LabRoute, type Route, type Router } from "../router";
import { fetchLessons } from "./api";
import { mountLesson, type LessonView } from "./page";
import { mountStart } from "./start";

export interface SiteOptions {
  nav: HTMLElement;
  /** the lab's sections */
  lab: HTMLElement[];
  start: HTMLElement;
  lesson: HTMLElement;
  figure: HTMLElement;
  /** the lab is shown: open it with the route's preset or code, if it names one */
  onLab(route: LabRoute): void;
}

const LAB_TITLE = "gradwalk lab: step through loss.backward()";

export function startSite(o: SiteOptions): Router {
  let teardown: (() => void) | null = null;
  let lessonView: LessonView | null = null;
  let current: Route | null = null;

  const markMenu = () => {
    const key = current ? routeKey(current) : "";
    for (const a of o.nav.querySelectorAll<HTMLAnchorElement>("a")) {
      if (a.dataset.route === key) {
        a.setAttribute("aria-current", "page");
        // on a phone the menu scrolls sideways: bring the current page's link into it
        if (o.nav.scrollWidth > o.nav.clientWidth) o.nav.scrollLeft = a.offsetLeft - (o.nav.clientWidth - a.offsetWidth) / 2;
      } else a.removeAttribute("aria-current");
    }
  };
  buildMenu(o.nav, []);
  void fetchLessons().then(
    (lessons) => {
      buildMenu(o.nav, lessons);
      markMenu();
    },
    () => undefined,
  );

  const show = (route: Route, how: { changed: boolean; initial: boolean }) => {
    current = route;
    if (!how.changed) {
      if (route.page === "lesson") lessonView?.goTo(route.section);
      if (route.page === "lab") o.onLab(route);
      return;
    }
    teardown?.();
    teardown = null;
    lessonView = null;
    for (const part of o.lab) part.hidden = route.page !== "lab";
    o.start.hidden = route.page !== "start" && route.page !== "missing";
    o.lesson.hidden = route.page !== "lesson";
    o.figure.hidden = route.page !== "figure";
    for (const c of [o.start, o.lesson, o.figure]) if (c.hidden) c.replaceChildren();
    // the skip link leads to what this page holds: the lab's step controls, or the page itself
    const skip = document.querySelector<HTMLAnchorElement>("a.skip-link");
    if (skip) {
      const target = route.page === "lab" ? null : route.page === "lesson" ? o.lesson : route.page === "figure" ? o.figure : o.start;
      skip.href = target ? `#${target.id}` : "#controls";
      skip.textContent = target ? "Skip to the page's content" : "Skip to the step controls";
    }
    document.body.dataset.route = routeKey(route);
    document.body.dataset.page = route.page;
    markMenu();

    let focus: HTMLElement | null = null;
    switch (route.page) {
      case "start":
        document.title = "gradwalk: learn autograd by watching it run";
        teardown = mountStart(o.start);
        focus = o.start;
        break;
      case "missing":
        document.title = "Not found · gradwalk";
        o.start.replaceChildren(
          h("article", { class: "start" }, h("h2", {}, "There is no page here"), h("p", {}, `Nothing lives at ${route.path}. `, h("a", { href: "/" }, "Go to the start page"), ".")),
        );
        break;
      case "lab":
        document.title = LAB_TITLE;
        o.onLab(route);
        break;
      case "lesson": {
        document.title = "Lesson · gradwalk";
        const view = mountLesson(o.lesson, route.id, route.section, (title) => (document.title = `${title} · gradwalk`));
        lessonView = view;
        teardown = () => view.teardown();
        focus = route.section ? null : o.lesson;
        break;
      }
      case "figure": {
        const page = figureById(route.id);
        if (!page) {
          document.title = "Not found · gradwalk";
          o.figure.replaceChildren(h("p", { class: "figure-error", role: "alert" }, `There is no figure named “${route.id}”. `, h("a", { href: "/" }, "Go to the start page"), "."));
          break;
        }
        document.title = `${page.title} · gradwalk lab`;
        teardown = mountFigurePage(o.figure, page);
        focus = o.figure;
        break;
      }
    }
    if (!how.initial) {
      window.scrollTo(0, 0);
      // a screen reader hears the new page, not the link it left
      if (focus) {
        focus.tabIndex = -1;
        focus.focus({ preventScroll: true });
      }
    }
  };

  return startRouter(show);
}
