// Zoom and scroll for the graph panel. The SVG is drawn at a scale of its natural size: "fit"
// shrinks it to the panel, but never below MIN_FIT (smaller labels are unreadable), so a big
// graph scrolls, both ways, instead. The buttons (Fit / 100% / − / +) set the scale by hand.
// As the user steps, `follow` scrolls the node being run into view, smoothly, and only when it
// is not already in view (a long way, e.g. "Run to end", jumps).

const MIN_FIT = 0.75;
const MIN_SCALE = 0.3;
const MAX_SCALE = 2.5;
const STEP = 1.25;
const EDGE = 8; // px: a node this close to the edge of the view still counts as in view

export interface ZoomButtons {
  fit: HTMLButtonElement;
  actual: HTMLButtonElement;
  zoomIn: HTMLButtonElement;
  zoomOut: HTMLButtonElement;
  readout: HTMLElement;
}

export interface Zoom {
  /** A new SVG went into the scroller: size it (natural size in px) and start at the top. */
  attach(svg: SVGSVGElement, width: number, height: number): void;
  /** Forget the SVG (the panel shows something else). */
  detach(): void;
  /** Keep `target` (a node of the SVG) in view. */
  follow(target: Element | null): void;
}

function reducedMotion(): boolean {
  return window.matchMedia?.("(prefers-reduced-motion: reduce)").matches ?? false;
}

export function createZoom(scroller: HTMLElement, buttons: ZoomButtons): Zoom {
  let svg: SVGSVGElement | null = null;
  let natural = { width: 0, height: 0 };
  let mode: "fit" | number = "fit";
  let scale = 1;
  let fresh = false; // the SVG was just attached: the first follow jumps instead of scrolling

  /** The room the scroller gives its content: its width, and its height or max-height. */
  function room(): { width: number; height: number } {
    const style = getComputedStyle(scroller);
    const padX = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
    const padY = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom);
    const maxHeight = parseFloat(style.maxHeight); // NaN for "none"
    const height = Number.isFinite(maxHeight) ? maxHeight : scroller.clientHeight;
    return { width: scroller.clientWidth - padX, height: height - padY };
  }

  function fitScale(): number {
    if (!natural.width || !natural.height) return 1;
    const { width, height } = room();
    const fits = Math.min(width / natural.width, height / natural.height);
    return Math.max(MIN_FIT, Math.min(1, fits));
  }

  function apply(): void {
    scale = mode === "fit" ? fitScale() : mode;
    buttons.readout.textContent = `${Math.round(scale * 100)}%`;
    buttons.fit.setAttribute("aria-pressed", mode === "fit" ? "true" : "false");
    buttons.zoomIn.setAttribute("aria-disabled", scale >= MAX_SCALE ? "true" : "false");
    buttons.zoomOut.setAttribute("aria-disabled", scale <= MIN_SCALE ? "true" : "false");
    if (!svg) return;
    svg.setAttribute("width", String(Math.round(natural.width * scale)));
    svg.setAttribute("height", String(Math.round(natural.height * scale)));
    scroller.dataset.scale = scale.toFixed(3);
  }

  /** Set a new scale, keeping the point at the middle of the view where it was. */
  function zoomTo(next: "fit" | number): void {
    const before = scale;
    const cx = scroller.scrollLeft + scroller.clientWidth / 2;
    const cy = scroller.scrollTop + scroller.clientHeight / 2;
    mode = typeof next === "number" ? Math.max(MIN_SCALE, Math.min(MAX_SCALE, next)) : next;
    apply();
    const k = scale / before;
    scroller.scrollLeft = cx * k - scroller.clientWidth / 2;
    scroller.scrollTop = cy * k - scroller.clientHeight / 2;
  }

  buttons.fit.addEventListener("click", () => zoomTo("fit"));
  buttons.actual.addEventListener("click", () => zoomTo(1));
  buttons.zoomIn.addEventListener("click", () => zoomTo(scale * STEP));
  buttons.zoomOut.addEventListener("click", () => zoomTo(scale / STEP));
  let lastWidth = window.innerWidth;
  let lastHeight = window.innerHeight;
  window.addEventListener("resize", () => {
    if (window.innerWidth === lastWidth && window.innerHeight === lastHeight) return;
    lastWidth = window.innerWidth;
    lastHeight = window.innerHeight;
    if (mode === "fit") apply();
  });
  apply();

  return {
    attach(next, width, height) {
      svg = next;
      natural = { width, height };
      apply();
      scroller.scrollTop = 0;
      scroller.scrollLeft = Math.max(0, (scroller.scrollWidth - scroller.clientWidth) / 2);
      fresh = true;
    },
    detach() {
      svg = null;
      natural = { width: 0, height: 0 };
      delete scroller.dataset.scale;
    },
    follow(target) {
      const jump = fresh;
      fresh = false;
      if (!target || !svg) return;
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
