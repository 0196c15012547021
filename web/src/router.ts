// Routing by path, with the History API: one page (index.html) serves every address and shows
// the part the path names.
//
//   /                     the start page
//   /lab                  the stepping lab; /lab?preset=<id> and /lab#code=<base64url> open it
//                         with that code
//   /lessons/<id>         a lesson (a #<section> scrolls to it)
//   /figures/<id>         a figure page
//
// The old hash addresses still work: /#/figure/<id> and /#/ are replaced (history.replaceState)
// by /figures/<id> and /lab. Links inside the page navigate with pushState (no reload), and
// back/forward re-route. This module is pure routing: what each page shows is given to it.

export type Route =
  | { page: "start" }
  | { page: "lab"; preset: string | null; code: string | null }
  | { page: "lesson"; id: string; section: string | null }
  | { page: "figure"; id: string }
  | { page: "missing"; path: string };

export type LabRoute = Extract<Route, { page: "lab" }>;

const ID = "[A-Za-z0-9_-]+";

/** What an address shows. */
export function parseRoute(pathname: string, search = "", hash = ""): Route {
  const path = pathname.replace(/\/+$/, "") || "/";
  if (path === "/" || path === "/index.html") return { page: "start" };
  if (path === "/lab") {
    const preset = new URLSearchParams(search).get("preset");
    const match = /^#code=([A-Za-z0-9_-]*)$/.exec(hash);
    return { page: "lab", preset: preset || null, code: match ? decodeCode(match[1]) : null };
  }
  let m = new RegExp(`^/lessons/(${ID})$`).exec(path);
  if (m) return { page: "lesson", id: m[1], section: hash.length > 1 ? decodeURIComponent(hash.slice(1)) : null };
  m = new RegExp(`^/figures/(${ID})$`).exec(path);
  if (m) return { page: "figure", id: m[1] };
  return { page: "missing", path: pathname };
}

/** The new address of an old hash address (`/#/figure/<id>`, `/#/`), or null. */
export function legacyAddress(pathname: string, hash: string): string | null {
  if (pathname !== "/" && pathname !== "/index.html") return null;
  const m = new RegExp(`^#/figure/(${ID})$`).exec(hash);
  if (m) return `/figures/${m[1]}`;
  if (hash === "#/" || hash === "#/lab") return "/lab";
  return null;
}

/** The key a route is shown under (a new key: the page is rebuilt). */
export function routeKey(route: Route): string {
  switch (route.page) {
    case "start":
    case "lab":
      return route.page;
    case "lesson":
      return `lessons/${route.id}`;
    case "figure":
      return route.id;
    case "missing":
      return "missing";
  }
}

// ---- snippets in addresses: base64url of the UTF-8 text, no padding ----------------------

export function encodeCode(code: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(code)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function decodeCode(text: string): string | null {
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  } catch {
    return null;
  }
}

/** The lab, opened with `code` in its editor. */
export function labAddress(code: string): string {
  return `/lab#code=${encodeCode(code)}`;
}

// ---- the router -------------------------------------------------------------------------

export interface Router {
  /** Go to `href` (pushState) and show it. */
  navigate(href: string): void;
  readonly route: Route;
}

/**
 * Shows `show(route)` for the current address now, then on every in-page link click and on
 * back/forward. `show` returns nothing; the caller tears down whatever it mounted before.
 * `changed` says whether the page itself changed (false for a new hash on the same page).
 */
export function startRouter(show: (route: Route, how: { changed: boolean; initial: boolean }) => void): Router {
  const legacy = legacyAddress(location.pathname, location.hash);
  if (legacy) history.replaceState(null, "", legacy);

  let current = parseRoute(location.pathname, location.search, location.hash);
  let shownAt = location.pathname + location.search;

  const render = (initial: boolean) => {
    const previousKey = routeKey(current);
    const previousAt = shownAt;
    current = parseRoute(location.pathname, location.search, location.hash);
    shownAt = location.pathname + location.search;
    const changed = initial || routeKey(current) !== previousKey || shownAt !== previousAt;
    show(current, { changed, initial });
  };

  const navigate = (href: string) => {
    const url = new URL(href, location.href);
    const legacyTarget = legacyAddress(url.pathname, url.hash);
    const target = legacyTarget ?? url.pathname + url.search + url.hash;
    if (target !== location.pathname + location.search + location.hash) history.pushState(null, "", target);
    render(false);
  };

  document.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const a = (event.target as Element | null)?.closest?.("a");
    if (!a || !a.href || (a.target && a.target !== "_self") || a.hasAttribute("download")) return;
    const url = new URL(a.href);
    if (url.origin !== location.origin || url.pathname.startsWith("/api/") || url.pathname.startsWith("/openapi")) return;
    // A link to a place on the same page (a section) is the browser's own jump; the hash
    // change re-routes only where the hash means something (the lab's #code=).
    if (url.pathname === location.pathname && url.search === location.search && url.hash && !url.hash.startsWith("#/")) return;
    event.preventDefault();
    navigate(url.href);
  });
  window.addEventListener("popstate", () => render(false));
  window.addEventListener("hashchange", () => {
    const legacyTarget = legacyAddress(location.pathname, location.hash);
    if (legacyTarget) history.replaceState(null, "", legacyTarget);
    render(false);
  });

  render(true);
  return {
    navigate,
    get route() {
      return current;
    },
  };
}
