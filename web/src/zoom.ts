// Zoom, scroll and overview for the graph panel. The SVG is drawn at a scale of its natural size:
// - "auto" (the start): fit the panel, but never below MIN_READABLE (smaller labels are
//   unreadable), so a big graph scrolls, both ways, with an overview in the corner;
// - "fit" (the Fit button): the whole graph in the panel, however small that makes it;
// - a number: 100% / − / + by hand.
// As the user steps, `follow` scrolls the node being run into view (the Follow button turns that
// off), smoothly, and only when it is not already in view (a long way, e.g. "Run to end", jumps).
// The overview is a small copy of the graph with the visible part boxed: drag or click it to move.

const MIN_READABLE = 0.75;
const MIN_SCALE = 0.05;
const MAX_SCALE = 2.5;
const STEP = 1.25;
const EDGE = 8; // px: a node this close to the edge of the view still counts as in view
const OVERVIEW = 150; // px: the overview's longer side

export interface ZoomButtons {
  fit: HTMLButtonElement;
  actual: HTMLButtonElement;
  zoomIn: HTMLButtonElement;
  zoomOut: HTMLButtonElement;
  readout: HTMLElement;
  follow?: HTMLButtonElement;
  overview?: HTMLElement;
}

export interface Zoom {
  /** A new SVG went into the scroller: size it (natural size in px) and start at the top. */
  attach(svg: SVGSVGElement, width: number, height: number): void;
  /** Forget the SVG (the panel shows something else). */
  detach(): void;
  /** Keep `target` (a node of the SVG) in view, when Follow is on. */
  follow(target: Element | null): void;
  /** The SVG's classes changed (a step): bring the overview up to date. */
  refresh(): void;
}

function reducedMotion(): boolean {
  return window.matchMedia?.("(prefers-reduced-motion: reduce)").matches ?? false;
}

export function createZoom(scroller: HTMLElement, buttons: ZoomButtons): Zoom {
  let svg: SVGSVGElement | null = null;
  let natural = { width: 0, height: 0 };
  let mode: "auto" | "fit" | number = "auto";
  let scale = 1;
  let following = true;
  let fresh = false; // the SVG was just attached: the first follow jumps instead of scrolling

  // ---- the overview --------------------------------------------------------------------
  const overview = buttons.overview ?? null;
  let mini: SVGSVGElement | null = null;
  let miniNodes: SVGGElement[] = [];
  const box = document.createElement("div");
  box.className = "overview-box";
  overview?.setAttribute("aria-hidden", "true"); // a pointer aid: the keyboard has Fit and scrolling

  function buildOverview(): void {
    if (!overview || !svg) return;
    mini = svg.cloneNode(true) as SVGSVGElement;
    for (const el of mini.querySelectorAll("[id]")) el.removeAttribute("id");
    for (const el of mini.querySelectorAll("text, title")) el.remove();
    mini.removeAttribute("role");
    mini.removeAttribute("aria-label");
    const k = OVERVIEW / Math.max(natural.width, natural.height);
    mini.setAttribute("width", String(Math.max(1, Math.round(natural.width * k))));
    mini.setAttribute("height", String(Math.max(1, Math.round(natural.height * k))));
    miniNodes = Array.from(mini.querySelectorAll<SVGGElement>("g.node"));
    overview.replaceChildren(mini, box);
  }

  function syncOverview(): void {
    if (!overview) return;
    const overflows = !!svg && (scroller.scrollWidth > scroller.clientWidth + 2 || scroller.scrollHeight > scroller.clientHeight + 2);
    overview.hidden = !overflows;
    scroller.dataset.overview = overflows ? "1" : "0";
    if (!overflows || !mini) return;
    const big = svg!.querySelectorAll<SVGGElement>("g.node");
    miniNodes.forEach((g, i) => g.setAttribute("class", big[i]?.getAttribute("class") ?? "node"));
    const k = Number(mini.getAttribute("width")) / Math.max(1, scroller.scrollWidth);
    const kh = Number(mini.getAttribute("height")) / Math.max(1, scroller.scrollHeight);
    box.style.left = `${scroller.scrollLeft * k}px`;
    box.style.top = `${scroller.scrollTop * kh}px`;
    box.style.width = `${Math.min(scroller.clientWidth, scroller.scrollWidth) * k}px`;
    box.style.height = `${Math.min(scroller.clientHeight, scroller.scrollHeight) * kh}px`;
  }

  function moveFromOverview(event: PointerEvent): void {
    if (!overview || !mini) return;
    const r = mini.getBoundingClientRect();
    const fx = (event.clientX - r.left) / Math.max(1, r.width);
    const fy = (event.clientY - r.top) / Math.max(1, r.height);
    scroller.scrollLeft = fx * scroller.scrollWidth - scroller.clientWidth / 2;
    scroller.scrollTop = fy * scroller.scrollHeight - scroller.clientHeight / 2;
  }
  if (overview) {
    let dragging = false;
    overview.addEventListener("pointerdown", (e) => {
      dragging = true;
      overview.setPointerCapture?.(e.pointerId);
      moveFromOverview(e);
      e.preventDefault();
    });
    overview.addEventListener("pointermove", (e) => dragging && moveFromOverview(e));
    overview.addEventListener("pointerup", () => (dragging = false));
    overview.addEventListener("pointercancel", () => (dragging = false));
  }
  scroller.addEventListener("scroll", syncOverview, { passive: true });

  // ---- scale ---------------------------------------------------------------------------
  /** The room the scroller gives its content: its width, and its height or max-height. */
  function room(): { width: number; height: number } {
    const style = getComputedStyle(scroller);
    const padX = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
    const padY = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom);
    const maxHeight = parseFloat(style.maxHeight); // NaN for "none"
    const height = Number.isFinite(maxHeight) ? maxHeight : scroller.clientHeight;
    return { width: scroller.clientWidth - padX, height: height - padY };
  }

  function fitScale(floor: number): number {
    if (!natural.width || !natural.height) return 1;
    const { width, height } = room();
    const fits = Math.min(width / natural.width, height / natural.height);
    return Math.max(floor, Math.min(1, fits));
  }

  function apply(): void {
    scale = mode === "auto" ? fitScale(MIN_READABLE) : mode === "fit" ? fitScale(MIN_SCALE) : mode;
    buttons.readout.textContent = `${Math.round(scale * 100)}%`;
    buttons.fit.setAttribute("aria-pressed", mode === "fit" ? "true" : "false");
    buttons.zoomIn.setAttribute("aria-disabled", scale >= MAX_SCALE ? "true" : "false");
    buttons.zoomOut.setAttribute("aria-disabled", scale <= MIN_SCALE ? "true" : "false");
    scroller.dataset.zoom = typeof mode === "number" ? "manual" : mode;
    if (!svg) return;
    svg.setAttribute("width", String(Math.round(natural.width * scale)));
    svg.setAttribute("height", String(Math.round(natural.height * scale)));
    scroller.dataset.scale = scale.toFixed(3);
    syncOverview();
  }

  /** Set a new scale, keeping the point at the middle of the view where it was. */
  function zoomTo(next: "auto" | "fit" | number): void {
    const before = scale;
    const cx = scroller.scrollLeft + scroller.clientWidth / 2;
    const cy = scroller.scrollTop + scroller.clientHeight / 2;
    mode = typeof next === "number" ? Math.max(MIN_SCALE, Math.min(MAX_SCALE, next)) : next;
    apply();
    const k = scale / before;
    scroller.scrollLeft = cx * k - scroller.clientWidth / 2;
    scroller.scrollTop = cy * k - scroller.clientHeight / 2;
    syncOverview();
  }

  function setFollowing(on: boolean): void {
    following = on;
    buttons.follow?.setAttribute("aria-pressed", on ? "true" : "false");
  }

  buttons.fit.addEventListener("click", () => zoomTo(mode === "fit" ? "auto" : "fit"));
  buttons.actual.addEventListener("click", () => zoomTo(1));
  buttons.zoomIn.addEventListener("click", () => zoomTo(scale * STEP));
  buttons.zoomOut.addEventListener("click", () => zoomTo(scale / STEP));
  buttons.follow?.addEventListener("click", () => setFollowing(!following));
  let lastWidth = window.innerWidth;
  let lastHeight = window.innerHeight;
  window.addEventListener("resize", () => {
    if (window.innerWidth === lastWidth && window.innerHeight === lastHeight) return;
    lastWidth = window.innerWidth;
    lastHeight = window.innerHeight;
    if (typeof mode !== "number") apply();
    else syncOverview();
  });
  apply();
  setFollowing(true);

  return {
    attach(next, width, height) {
      svg = next;
      natural = { width, height };
      buildOverview();
      apply();
      scroller.scrollTop = 0;
      scroller.scrollLeft = Math.max(0, (scroller.scrollWidth - scroller.clientWidth) / 2);
      fresh = true;
      syncOverview();
    },
    detach() {
      svg = null;
      mini = null;
      natural = { width: 0, height: 0 };
      delete scroller.dataset.scale;
      if (overview) {
        overview.hidden = true;
        overview.replaceChildren();
      }
    },
    refresh: syncOverview,
    follow(target) {
      const jump = fresh;
      fresh = false;
      if (!target || !svg || !following) return;
      const view = scroller.getBoundingClientRect();
      const box = target.getBoundingClientRect();
      const top = box.top - view.top - scroller.clientTop;
      const left = box.left - view.left - scroller.clientLeft;
      const inView =
        top >= -EDGE &&
        left >= -EDGE &&
        top + box.height <= scroller.clientHeight + EDGE &&
        left + box.width <= scroller.clientWidth + EDGE;
      if (inView) return;
      const centre = (offset: number, size: number, room: number) => offset + size / 2 - room / 2;
      const dy = centre(top, box.height, scroller.clientHeight);
      const dx = centre(left, box.width, scroller.clientWidth);
      // A step moves a little, smoothly; a long way (run to end, reset) jumps there at once.
      const far = Math.abs(dy) > 1.5 * scroller.clientHeight || Math.abs(dx) > 1.5 * scroller.clientWidth;
      scroller.scrollTo({
        top: scroller.scrollTop + dy,
        left: scroller.scrollLeft + dx,
        behavior: jump || far || reducedMotion() ? "auto" : "smooth",
      });
    },
  };
}
