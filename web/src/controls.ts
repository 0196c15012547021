// Controls: Step, Step back, Run to end, Reset, Auto-play with a speed slider, and the keyboard
// shortcuts for them (only when focus is not in the editor or a form field).

export interface ControlHandlers {
  /** Advance one frame; false when already at the end. */
  step(): boolean;
  back(): void;
  end(): void;
  reset(): void;
  run(): void;
}

export interface Position {
  cursor: number;
  count: number;
  label: string;
}

export interface Controls {
  update(position: Position): void;
  stopPlay(): void;
}

function button(id: string): HTMLButtonElement {
  const el = document.getElementById(id);
  if (!(el instanceof HTMLButtonElement)) throw new Error(`#${id} is missing`);
  return el;
}

/** Buttons are disabled with aria-disabled, not `disabled`, so they keep keyboard focus. */
function setEnabled(el: HTMLButtonElement, enabled: boolean): void {
  el.setAttribute("aria-disabled", enabled ? "false" : "true");
}

function enabled(el: HTMLButtonElement): boolean {
  return el.getAttribute("aria-disabled") !== "true";
}

export function createControls(handlers: ControlHandlers): Controls {
  const stepBtn = button("step");
  const backBtn = button("back");
  const endBtn = button("end");
  const resetBtn = button("reset");
  const playBtn = button("play");
  const speed = document.getElementById("speed") as HTMLInputElement;
  const speedOut = document.getElementById("speed-value");
  const positionEl = document.getElementById("position");

  let timer: number | null = null;
  let atEnd = true;

  const delay = () => 1000 / Math.max(0.25, Number(speed.value) || 1);

  function showSpeed() {
    if (speedOut) speedOut.textContent = `${speed.value} steps/s`;
    speed.setAttribute("aria-valuetext", `${speed.value} steps per second`);
  }

  function setPlaying(playing: boolean) {
    playBtn.setAttribute("aria-pressed", playing ? "true" : "false");
    const icon = playing ? "M4 3h3v10H4zM9 3h3v10H9z" : "M5 3l7 5-7 5z";
    playBtn.innerHTML = `<svg class="icon" viewBox="0 0 16 16" aria-hidden="true"><path d="${icon}"/></svg> ${playing ? "Pause" : "Play"}`;
    playBtn.setAttribute("aria-label", playing ? "Pause auto-play" : "Auto-play the steps");
    document.body.dataset.playing = playing ? "1" : "0";
  }

  function stopPlay() {
    if (timer != null) window.clearTimeout(timer);
    timer = null;
    setPlaying(false);
  }

  function tick() {
    // step() re-renders, and update() stops the timer when the end is reached.
    if (!handlers.step() || timer == null) return stopPlay();
    timer = window.setTimeout(tick, delay());
  }

  function togglePlay() {
    if (timer != null) return stopPlay();
    if (atEnd) handlers.reset();
    setPlaying(true);
    timer = window.setTimeout(tick, delay());
  }

  const guarded = (el: HTMLButtonElement, action: () => void) =>
    el.addEventListener("click", () => {
      if (!enabled(el)) return;
      stopPlay();
      action();
    });
  guarded(stepBtn, () => void handlers.step());
  guarded(backBtn, handlers.back);
  guarded(endBtn, handlers.end);
  guarded(resetBtn, handlers.reset);
  playBtn.addEventListener("click", () => enabled(playBtn) && togglePlay());
  speed.addEventListener("input", showSpeed);
  showSpeed();
  setPlaying(false);

  document.addEventListener("keydown", (event) => {
    // The editor's own keymap runs the snippet on Ctrl+Enter and marks the event handled:
    // running it here as well ran every snippet twice.
    if (event.defaultPrevented) return;
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      if ((event.target as HTMLElement | null)?.closest?.(".cm-editor")) return;
      event.preventDefault();
      handlers.run();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target as HTMLElement | null;
    // Keys typed into the editor or a form field belong to it (a checkbox only uses space).
    if (target?.closest('.cm-editor, select, textarea, [contenteditable], input:not([type="checkbox"])')) return;
    // Keys only step the lab while the lab is the page shown (not a figure or a lesson).
    if (stepBtn.closest("[hidden]")) return;
    // Space and Enter on a focused button or checkbox already press it.
    if ((event.key === " " || event.key === "Enter") && target?.closest("button, a, summary, input")) return;
    const actions: Record<string, () => void> = {
      ArrowRight: () => stepBtn.click(),
      n: () => stepBtn.click(),
      ArrowLeft: () => backBtn.click(),
      p: () => backBtn.click(),
      End: () => endBtn.click(),
      Home: () => resetBtn.click(),
      r: () => resetBtn.click(),
      " ": () => playBtn.click(),
    };
    const action = actions[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  });

  return {
    update({ cursor, count, label }) {
      atEnd = cursor >= count - 1;
      const any = count > 0;
      setEnabled(stepBtn, any && !atEnd);
      setEnabled(endBtn, any && !atEnd);
      setEnabled(backBtn, any && cursor > 0);
      setEnabled(resetBtn, any && cursor > 0);
      setEnabled(playBtn, count > 1);
      if (positionEl) positionEl.textContent = label;
      if (atEnd && timer != null) stopPlay();
    },
    stopPlay,
  };
}
