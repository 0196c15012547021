// First steps in the lab: a short guide on the first visit (dismissible, remembered in
// localStorage, re-opened by "How to use the lab"), a "?" on each panel that opens a short
// explanation under its heading, and the lab's terms ("waits", "input buffer", "seq 2⁶⁴−1",
// "AccumulateGrad", "freed") explained where they appear, on hover, focus and tap.
//
// The guide is not modal: it never blocks the page, so a student can follow it while pressing
// the buttons it names. Wide screens get it as a card over the step log (empty at first), narrow
// ones at the top of the lab.

import { h } from "./dom";

// ---- terms --------------------------------------------------------------------------------

export const TERMS: Record<string, string> = {
  waits:
    "How many gradients the node still waits for. compute_dependencies counts the edges into each node before the first step; each arriving gradient takes one off. At 0 the node goes into the ready queue.",
  "input buffer":
    "Where a node's incoming gradients are summed while it waits for the rest. Two paths into one node means two gradients added in its buffer before the node runs.",
  "seq 2⁶⁴−1":
    "AccumulateGrad nodes have the largest sequence number there is, 2⁶⁴−1 (18446744073709551615), so the ready queue always pops them first: a leaf's .grad is written as soon as its gradient is complete.",
  AccumulateGrad:
    "The node at the end of every leaf that requires grad. It adds the gradient it receives into the leaf's .grad (+=, so gradients accumulate across backward calls).",
  freed:
    "After a node runs, PyTorch frees the tensors it saved for its formula (release_variables), unless retain_graph=True. A second backward() through it then fails.",
  "ready queue":
    "The nodes whose gradients are complete, ordered by sequence number, highest first: the node created last in the forward pass runs first.",
  "sequence number":
    "A counter every backward node takes when the forward pass creates it (0, 1, 2, …). The ready queue pops the highest first.",
  "saved tensors":
    "Values a node keeps from the forward pass because its backward formula needs them: MulBackward0 keeps both factors, TanhBackward0 keeps its result.",
};

let tip: HTMLElement | null = null;
let tipOwner: HTMLElement | null = null;

function tooltip(): HTMLElement {
  if (!tip) {
    tip = h("div", { id: "term-tip", class: "term-tip", role: "tooltip", hidden: true });
    document.body.append(tip);
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && tipOwner) hideTip();
    });
    document.addEventListener("pointerdown", (e) => {
      if (tipOwner && !(e.target as Element | null)?.closest?.(".term")) hideTip();
    });
  }
  return tip;
}

function showTip(owner: HTMLElement): void {
  const el = tooltip();
  const word = owner.dataset.term ?? "";
  el.replaceChildren(h("strong", {}, word), " ", TERMS[word] ?? "");
  el.hidden = false;
  tipOwner = owner;
  owner.setAttribute("aria-expanded", "true");
  owner.setAttribute("aria-describedby", "term-tip");
  const box = owner.getBoundingClientRect();
  const width = Math.min(320, window.innerWidth - 16);
  el.style.width = `${width}px`;
  el.style.left = `${Math.max(8, Math.min(box.left, window.innerWidth - width - 8))}px`;
  const below = box.bottom + 6;
  el.style.top = `${below}px`;
  const height = el.getBoundingClientRect().height;
  if (below + height > window.innerHeight - 8) el.style.top = `${Math.max(8, box.top - height - 6)}px`;
}

function hideTip(): void {
  if (tip) tip.hidden = true;
  tipOwner?.setAttribute("aria-expanded", "false");
  tipOwner?.removeAttribute("aria-describedby");
  tipOwner = null;
}

/** A term written where it is used, with its meaning on hover, keyboard focus and tap. */
export function term(word: keyof typeof TERMS | string, text: string = word): HTMLElement {
  const button = h("button", { type: "button", class: "term", "data-term": word, "aria-expanded": "false" }, text);
  button.addEventListener("mouseenter", () => showTip(button));
  button.addEventListener("mouseleave", () => tipOwner === button && document.activeElement !== button && hideTip());
  button.addEventListener("focus", () => showTip(button));
  button.addEventListener("blur", () => tipOwner === button && hideTip());
  button.addEventListener("click", (e) => {
    e.stopPropagation();
    if (tipOwner === button) hideTip();
    else showTip(button);
  });
  return button;
}

// ---- a "?" on each panel -------------------------------------------------------------------

type Help = (string | HTMLElement)[];

/** What each panel shows, by the id of its heading's section ("queue" for #queue-title). */
const PANEL_HELP: Record<string, () => Help> = {
  editor: () => [
    "An ordinary PyTorch snippet, run by gradwalk (torch here is gradwalk). Edit it and press Run (Ctrl+Enter). Leaves are tensors made with requires_grad=True; each .backward() call is one pass you can step through.",
  ],
  graph: () => [
    "The backward graph the forward pass recorded, drawn with the output on top and the leaves at the bottom. Arrows point the way gradients flow. Each box is a node: its name, its ",
    term("sequence number"),
    ", the forward value (blue) and the gradient once it arrives (orange). The node being run has a thick yellow border; the one that runs next has a thick orange border. Fit shows the whole graph; drag the overview's box to move around a big one.",
  ],
  queue: () => [
    "The ",
    term("ready queue"),
    ": nodes whose gradient is complete, in the order the engine pops them. Step runs the first one. In micrograd's order there is no queue; the list is the rest of its topological sort.",
  ],
  deps: () => [
    "For every node, how many gradients it still ",
    term("waits"),
    " for. A node that feeds two later operations waits for two. When the count reaches 0 the node moves to the ready queue.",
  ],
  buffers: () => [
    "Each waiting node's ",
    term("input buffer"),
    ": the gradients that have arrived so far, summed slot by slot. Empty most of the time: a node with only one consumer goes straight to the ready queue.",
  ],
  saved: () => [
    "The ",
    term("saved tensors"),
    " each node kept from the forward pass for its backward formula. They are ",
    term("freed"),
    " right after the node runs, unless retain_graph=True.",
  ],
  leafgrads: () => [
    "Every leaf's .grad. ",
    term("AccumulateGrad"),
    " adds into it (+=), so it keeps growing across backward() calls and across New forward pass, until you set it to None or call zero_grad(). “this pass” is what the current pass added.",
  ],
  log: () => ["What each step did, in words: the node popped, the gradient it received, what it sent along each edge, and which .grad it wrote."],
  compare: () => [
    "Runs the same snippet on gradwalk and on real PyTorch, with a hook on every node, and lists both engines' order, sequence numbers and gradients side by side. A difference is marked ✗.",
  ],
  profile: () => [
    "Runs the snippet under the profiler. Top row: the forward ops in the order they ran; bottom row: the backward nodes and the ops their formulas ran. A dashed line joins a forward op to the backward node it created (same sequence number).",
  ],
};

/** Put a "?" button after the heading of each panel; it opens a short explanation below it. */
export function addPanelHelp(root: ParentNode = document): void {
  for (const [id, content] of Object.entries(PANEL_HELP)) {
    const heading = root.querySelector<HTMLElement>(`#${id}-title`);
    if (!heading || heading.querySelector(".help-toggle")) continue;
    const title = heading.textContent?.trim() ?? id;
    const box = h("div", { class: "help", id: `${id}-help`, hidden: true }, h("p", {}, ...content()));
    const toggle = h(
      "button",
      { type: "button", class: "help-toggle", "aria-expanded": "false", "aria-controls": `${id}-help`, "aria-label": `What is “${title}”?`, title: `What is “${title}”?` },
      "?",
    );
    toggle.addEventListener("click", () => {
      const open = box.hidden;
      box.hidden = !open;
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
    });
    heading.append(" ", toggle);
    // below the heading, or below the card's head row when the heading sits in one
    const anchor = heading.parentElement?.classList.contains("card-head") ? heading.parentElement : heading;
    anchor.after(box);
  }
}

// ---- the first-visit guide --------------------------------------------------------------

const SEEN_KEY = "gradwalk.lab.guide-seen";

interface GuideStep {
  title: string;
  body: (string | HTMLElement)[];
  /** the element to point at while this step is shown */
  spot?: string;
}

const STEPS: GuideStep[] = [
  {
    title: "Welcome to the lab",
    body: [
      "The Snippet panel holds a small PyTorch program (pick others under Preset). It has already run forward: the Backward graph shows the nodes that forward pass recorded, output on top, leaves at the bottom. Nothing has gone backward yet.",
    ],
    spot: "#editor",
  },
  {
    title: "Press Step",
    body: [
      "Step (or the → key) runs one node of loss.backward(): the engine pops the first node of the ready queue, applies its local derivative and sends the results down the arrows. Back and Reset go the other way; Play steps by itself.",
    ],
    spot: "#step",
  },
  {
    title: "Watch the panels",
    body: [
      "Ready queue: what runs next. Dependencies: how many gradients each node still ",
      term("waits"),
      " for. Input buffers: gradients summed while a node waits. Saved tensors: what each node kept, ",
      term("freed"),
      " after it runs. Leaf .grad: what ",
      term("AccumulateGrad"),
      " wrote. Every panel has a ? that explains it.",
    ],
    spot: "#queue-title",
  },
  {
    title: "Then try",
    body: [
      "backward() again (PyTorch's error), retain_graph=True (the fix), New forward pass (.grad keeps adding up), the micrograd order (same gradients, other order), the other presets, and Check against PyTorch below the lab. Reopen this guide with “How to use the lab”.",
    ],
    spot: "#again",
  },
];

function seen(): boolean {
  try {
    return localStorage.getItem(SEEN_KEY) === "1";
  } catch {
    return false;
  }
}

function remember(): void {
  try {
    localStorage.setItem(SEEN_KEY, "1");
  } catch {
    // private mode: the guide shows again next time, nothing else is lost
  }
}

export interface Guide {
  open(): void;
  close(): void;
}

/** The guide; it opens by itself on the first visit (`autoOpen`), and from `opener`. */
export function createGuide(host: HTMLElement, opener: HTMLButtonElement | null, autoOpen = true): Guide {
  let index = 0;
  const heading = h("h2", { id: "guide-title" });
  const counter = h("span", { class: "guide-count" });
  const body = h("p", { class: "guide-body" });
  const back = h("button", { type: "button", id: "guide-back" }, "Back");
  const next = h("button", { type: "button", id: "guide-next", class: "primary" }, "Next");
  const close = h("button", { type: "button", id: "guide-close", class: "guide-x", "aria-label": "Close the guide" }, "×");
  const card = h(
    "section",
    { id: "guide", class: "guide card", role: "dialog", "aria-modal": "false", "aria-labelledby": "guide-title", hidden: true },
    h("div", { class: "guide-head" }, heading, counter, close),
    body,
    h("div", { class: "guide-actions" }, back, next),
  );
  host.prepend(card);

  let spot: Element | null = null;
  function show(): void {
    const step = STEPS[index];
    heading.textContent = step.title;
    counter.textContent = `${index + 1} of ${STEPS.length}`;
    body.replaceChildren(...step.body);
    back.setAttribute("aria-disabled", index === 0 ? "true" : "false");
    next.textContent = index === STEPS.length - 1 ? "Got it" : "Next";
    spot?.classList.remove("guide-spot");
    spot = step.spot ? document.querySelector(step.spot) : null;
    spot?.classList.add("guide-spot");
    card.dataset.step = String(index);
  }
  function open(): void {
    index = 0;
    card.hidden = false;
    document.body.dataset.guide = "open";
    opener?.setAttribute("aria-expanded", "true");
    show();
    heading.setAttribute("tabindex", "-1");
    heading.focus();
  }
  function hide(): void {
    if (card.hidden) return;
    card.hidden = true;
    document.body.dataset.guide = "closed";
    opener?.setAttribute("aria-expanded", "false");
    spot?.classList.remove("guide-spot");
    spot = null;
    remember();
    opener?.focus();
  }
  back.addEventListener("click", () => {
    if (index > 0) index--;
    show();
  });
  next.addEventListener("click", () => {
    if (index < STEPS.length - 1) {
      index++;
      show();
    } else hide();
  });
  close.addEventListener("click", hide);
  card.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.stopPropagation();
      hide();
    }
  });
  opener?.addEventListener("click", () => (card.hidden ? open() : hide()));
  opener?.setAttribute("aria-controls", "guide");
  opener?.setAttribute("aria-expanded", "false");
  if (autoOpen && !seen()) {
    card.hidden = false;
    document.body.dataset.guide = "open";
    opener?.setAttribute("aria-expanded", "true");
    show();
  } else document.body.dataset.guide = "closed";
  return { open, close: hide };
}
