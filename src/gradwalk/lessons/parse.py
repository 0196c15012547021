"""A lesson file (docs/lessons.md) read into its parts, and those parts rendered to the API's JSON.

Reading is in two steps, so that numbers can be computed between them:

    source = read_lesson(path)          # front matter, raw blocks, placeholders, code to run
    results = compute(source)           # compute.py: the code run under gradwalk (or PyTorch)
    lesson = render(source, results)    # docs/lessons-api.md's JSON, every number filled in

Raw HTML in a lesson is never passed through: Markdown is rendered by markdown-it with HTML
off, and the only HTML the server adds is its own (terms, math, numbers).
"""
import html
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin

FIGURES = ("chain-rule", "activation", "gradient-check", "learning-rate", "xor", "paths-sum",
           "forward-mode", "dead-relu")
RECORDING_KINDS = ("hook-order", "profile")

# {{name}}, {{w.grad}}, {{losses[0]:.4f}}: a path of attributes and integer indexes, then a spec
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[-?\d+\])*)\s*(?::\s*([^{}]*?))?\s*\}\}")
TERM = re.compile(r"\[\[([^\[\]|]+?)(?:\|([^\[\]|]+?))?\]\]")
TOKEN = re.compile("\u2063P(\\d+)\u2063")  # invisible separators: no meaning to YAML or Markdown


class LessonError(ValueError):
    """A problem in a lesson file, with the file and line it is on."""

    def __init__(self, lesson, line, message):
        where = f"{lesson}.md" + (f", line {line}" if line else "")
        super().__init__(f"{where}: {message}")
        self.lesson, self.line, self.problem = lesson, line, message


@dataclass
class Placeholder:
    text: str      # as written: "w.grad:.4f"
    path: str      # "w.grad"
    spec: str      # ".4f" or ""
    line: int


@dataclass
class RawBlock:
    kind: str      # prose, heading, code, compute, listing, snippet, or a directive's kind
    line: int
    text: str = ""
    argument: str = ""
    attrs: dict = field(default_factory=dict)
    data: object = None


@dataclass
class LessonSource:
    id: str
    path: Path
    meta: dict
    blocks: list
    placeholders: list          # [Placeholder], in order, each distinct text once
    compute_code: list          # [(line, code)]
    listings: list              # [(line, code)]
    recordings: list            # [(line, {"kind", "code", "title"})]

    def placeholder(self, index):
        return self.placeholders[index]


# ---------------------------------------------------------------- reading the file

def read_lesson(path):
    path = Path(path)
    lesson_id = path.stem
    text = path.read_text(encoding="utf-8")
    meta, body, first_line = _front_matter(lesson_id, text)
    placeholders = []
    blocks = _split_blocks(lesson_id, body, first_line, placeholders)
    source = LessonSource(lesson_id, path, meta, blocks, placeholders, [], [], [])
    for block in blocks:
        if block.kind == "compute":
            source.compute_code.append((block.line, block.text))
        elif block.kind == "listing":
            source.listings.append((block.line, block.text))
        elif block.kind == "recording":
            source.recordings.append((block.line, block.data))
    return source


def _front_matter(lesson_id, text):
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise LessonError(lesson_id, 1, "a lesson starts with front matter: a line '---', then "
                                        "title:, summary: and order:, then a line '---'")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise LessonError(lesson_id, 1, "the front matter has no closing '---' line") from None
    try:
        meta = yaml.safe_load("\n".join(lines[1:end])) or {}
    except yaml.YAMLError as error:
        raise LessonError(lesson_id, 2, f"the front matter is not valid YAML: {error}") from None
    if not isinstance(meta, dict):
        raise LessonError(lesson_id, 2, "the front matter must be title:, summary: and order:")
    for key, kind in (("title", str), ("summary", str), ("order", int)):
        if not isinstance(meta.get(key), kind):
            raise LessonError(lesson_id, 2, f"the front matter needs {key}: (a {kind.__name__})")
    return meta, "\n".join(lines[end + 1:]), end + 2


_FENCE = re.compile(r"^(`{3,}|~{3,})\s*([^`]*)$")
_DIRECTIVE = re.compile(r"^:::\s*([a-z][\w-]*)\s*(.*?)\s*$")
_HEADING = re.compile(r"^##\s+(.+?)\s*#*\s*$")


def _split_blocks(lesson_id, body, first_line, placeholders):
    """The body as RawBlocks: fences, directives and ``##`` headings cut the prose."""
    lines = body.split("\n")
    blocks, prose, prose_line = [], [], first_line
    seen = {}

    def tokens(text, line):
        """Replace each {{...}} by an invisible token (a Placeholder's index)."""
        def swap(match):
            spec = (match.group(2) or "").strip()
            written = match.group(1) + (f":{spec}" if spec else "")
            if written not in seen:
                seen[written] = len(placeholders)
                placeholders.append(Placeholder(written, match.group(1), spec, line))
            return f"\u2063P{seen[written]}\u2063"
        out = PLACEHOLDER.sub(swap, text)
        stray = re.search(r"\{\{|\}\}", out)
        if stray:
            raise LessonError(lesson_id, line, "a '{{' or '}}' that is not a placeholder: write "
                                               "{{name}}, {{a.b[0]}} or {{name:.4f}}")
        return out

    def flush():
        text = "\n".join(prose).strip("\n")
        if text.strip():
            blocks.append(RawBlock("prose", prose_line, tokens(text, prose_line)))
        prose.clear()

    i = 0
    while i < len(lines):
        line, number = lines[i], first_line + i
        fence = _FENCE.match(line)
        directive = _DIRECTIVE.match(line)
        heading = _HEADING.match(line)
        if fence:
            flush()
            marker, info = fence.group(1), fence.group(2).strip()
            j = i + 1
            while j < len(lines) and not lines[j].startswith(marker):
                j += 1
            if j == len(lines):
                raise LessonError(lesson_id, number, f"the code block opened here ({marker}) is never closed")
            code = "\n".join(lines[i + 1:j]) + "\n"
            blocks.append(_fenced_block(lesson_id, number, info, code))
            i, prose_line = j + 1, first_line + j + 1
            continue
        if directive and line.strip() != ":::":
            flush()
            kind, argument = directive.group(1), directive.group(2)
            j = i + 1
            while j < len(lines) and lines[j].strip() != ":::":
                j += 1
            if j == len(lines):
                raise LessonError(lesson_id, number, f"the '::: {kind}' block opened here has no closing ':::' line")
            body_text = "\n".join(lines[i + 1:j])
            # a recording's code and an exercise's snippet are code: no placeholders there
            text = body_text if kind == "recording" else tokens(body_text, number + 1)
            blocks.append(_directive(lesson_id, number, kind, argument, text))
            i, prose_line = j + 1, first_line + j + 1
            continue
        if heading:
            flush()
            blocks.append(RawBlock("heading", number, tokens(heading.group(1), number)))
            i, prose_line = i + 1, first_line + i + 1
            continue
        prose.append(line)
        i += 1
    flush()
    return blocks


_ATTR = re.compile(r'(\w+)(?:=(?:"([^"]*)"|(\S+)))?')


def _fenced_block(lesson_id, line, info, code):
    words = info.split(None, 2)
    language = words[0] if words else None
    role = words[1] if len(words) > 1 else None
    if role in ("compute", "listing", "snippet"):
        if language != "python":
            raise LessonError(lesson_id, line, f"a {role} block is Python: write ```python {role}")
        attrs = {}
        for match in _ATTR.finditer(words[2] if len(words) > 2 else ""):
            attrs[match.group(1)] = match.group(2) if match.group(2) is not None else (match.group(3) or True)
        unknown = set(attrs) - ({"title", "step"} if role == "snippet" else set())
        if unknown:
            raise LessonError(lesson_id, line, f"unknown attribute(s) on a {role} block: {', '.join(sorted(unknown))}")
        return RawBlock(role, line, code, attrs=attrs)
    if role is not None:
        raise LessonError(lesson_id, line, f"unknown code block role {role!r}: use compute, listing or snippet")
    return RawBlock("code", line, code, attrs={"language": language})


def _yaml(lesson_id, line, kind, text):
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        at = line + 1 + mark.line if mark is not None else line
        raise LessonError(lesson_id, at, f"the '::: {kind}' block is not valid YAML "
                                         f"({getattr(error, 'problem', error)}); quote a text "
                                         f"that holds ': ' or starts with [ or {{") from None


def _need(lesson_id, line, ok, message):
    if not ok:
        raise LessonError(lesson_id, line, message)


def _texts(lesson_id, line, item, where, required, optional=()):
    _need(lesson_id, line, isinstance(item, dict), f"{where} must be a mapping with {', '.join(required)}")
    unknown = set(item) - set(required) - set(optional)
    _need(lesson_id, line, not unknown, f"{where} has unknown field(s): {', '.join(sorted(map(str, unknown)))}")
    for key in required:
        _need(lesson_id, line, key in item and item[key] is not None, f"{where} needs {key}:")


def _directive(lesson_id, line, kind, argument, text):
    data = _yaml(lesson_id, line, kind, text) if text.strip() else None
    need = lambda ok, message: _need(lesson_id, line, ok, message)  # noqa: E731
    if kind == "figure":
        need(argument in FIGURES, f"'::: figure' needs a figure id: one of {', '.join(FIGURES)}")
        data = data or {}
        _texts(lesson_id, line, data, "a figure", (), ("caption", "params"))
        need(isinstance(data.get("params", {}), dict), "a figure's params: must be a mapping")
    elif kind == "quiz":
        need(isinstance(data, list) and data, "a quiz is a list of questions (- question: ...)")
        for n, q in enumerate(data, 1):
            _texts(lesson_id, line, q, f"quiz question {n}", ("question", "choices"))
            need(isinstance(q["choices"], list) and len(q["choices"]) >= 2,
                 f"quiz question {n} needs at least two choices")
            for c in q["choices"]:
                _texts(lesson_id, line, c, f"a choice of quiz question {n}", ("text", "feedback"), ("correct",))
            correct = sum(1 for c in q["choices"] if c.get("correct") is True)
            need(correct == 1, f"quiz question {n} has {correct} choices marked correct: true (one is needed)")
    elif kind == "exam":
        need(isinstance(data, list) and data, "an exam is a list of questions (- question: ... answer: ...)")
        for n, q in enumerate(data, 1):
            _texts(lesson_id, line, q, f"exam question {n}", ("question", "answer"), ("marks",))
            need(isinstance(q.get("marks", 1), int) and q.get("marks", 1) > 0,
                 f"exam question {n}: marks must be a positive whole number")
    elif kind == "cards":
        need(isinstance(data, list) and data, "cards are a list of - front: ... back: ...")
        for n, c in enumerate(data, 1):
            _texts(lesson_id, line, c, f"card {n}", ("front", "back"))
    elif kind == "exercise":
        _texts(lesson_id, line, data, "an exercise", ("title", "problem", "answer"), ("snippet",))
    elif kind == "recording":
        _texts(lesson_id, line, data, "a recording", ("title", "kind", "code"))
        need(data["kind"] in RECORDING_KINDS, f"a recording's kind is one of {', '.join(RECORDING_KINDS)}")
    elif kind == "glossary":
        need(isinstance(data, dict) and data, "a glossary is a mapping: term: meaning")
        for term, meaning in data.items():
            need(isinstance(meaning, str), f"the glossary's {term!r} needs a meaning (text)")
    else:
        raise LessonError(lesson_id, line, f"unknown directive '::: {kind}': use figure, quiz, exam, "
                                           f"cards, exercise, recording or glossary")
    return RawBlock(kind, line, text, argument=argument, data=data)


# ---------------------------------------------------------------- rendering

def _markdown():
    md = MarkdownIt("commonmark", {"html": False}).enable("table").use(dollarmath_plugin, double_inline=True)
    md.add_render_rule("math_inline", lambda self, tokens, i, options, env:
                       f'<span class="math inline">{html.escape(tokens[i].content)}</span>')
    md.add_render_rule("math_inline_double", lambda self, tokens, i, options, env:
                       f'<span class="math display">{html.escape(tokens[i].content)}</span>')
    md.add_render_rule("math_block", lambda self, tokens, i, options, env:
                       f'<div class="math block">{html.escape(tokens[i].content.strip())}</div>\n')
    md.core.ruler.push("glossary_terms", _glossary_terms)
    return md


def _glossary_terms(state):
    """``[[term]]`` / ``[[shown|term]]`` in text (never in code) become term spans."""
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children = []
        for token in block.children:
            if token.type != "text" or "[[" not in token.content:
                children.append(token)
                continue
            position = 0
            for match in TERM.finditer(token.content):
                if match.start() > position:
                    children.append(_text_token(state, token.content[position:match.start()]))
                shown = match.group(1).strip()
                term = (match.group(2) or match.group(1)).strip()
                span = Token("html_inline", "", 0)
                span.content = (f'<span class="term" data-term="{html.escape(term)}">'
                                f'{html.escape(shown)}</span>')
                state.env.setdefault("terms", []).append(term)
                children.append(span)
                position = match.end()
            if position < len(token.content):
                children.append(_text_token(state, token.content[position:]))
        block.children = children


def _text_token(state, content):
    token = Token("text", "", 0)
    token.content = content
    return token


MARKDOWN = _markdown()


def _slug(title, taken):
    base = re.sub(r"[^a-z0-9]+", "-", re.sub(r"<[^>]+>", "", title).lower()).strip("-") or "section"
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    taken.add(slug)
    return slug


class Renderer:
    """Turns a LessonSource plus its computed results into the API's JSON."""

    def __init__(self, source, results):
        self.source = source
        self.numbers = results["numbers"]        # placeholder text -> shown text
        self.listing_outputs = results["listings"]
        self.recordings = results["recordings"]
        self.terms_used = []                     # (term, line)
        self.counts = {}

    def fill(self, text):
        """Put each placeholder's computed text in place of its token (in HTML: escaped)."""
        return TOKEN.sub(lambda m: html.escape(self.numbers[self.source.placeholder(int(m.group(1))).text]), text)

    def fill_plain(self, text):
        return TOKEN.sub(lambda m: self.numbers[self.source.placeholder(int(m.group(1))).text], text)

    def block_html(self, text, line):
        env = {}
        rendered = MARKDOWN.render(str(text), env)
        self.terms_used += [(t, line) for t in env.get("terms", [])]
        return self.fill(rendered)

    def inline_html(self, text, line):
        env = {}
        rendered = MARKDOWN.renderInline(str(text), env)
        self.terms_used += [(t, line) for t in env.get("terms", [])]
        return self.fill(rendered)

    def next_id(self, kind):
        self.counts[kind] = self.counts.get(kind, 0) + 1
        return f"{kind}-{self.counts[kind]}"

    def render(self):
        source = self.source
        intro, sections, glossary = [], [], None
        target, taken = intro, set()
        listing_index = recording_index = 0
        for block in source.blocks:
            if block.kind == "heading":
                title_html = self.inline_html(block.text, block.line)
                title = html.unescape(re.sub(r"<[^>]+>", "", title_html))
                sections.append({"id": _slug(title, taken), "title": title, "title_html": title_html,
                                 "blocks": []})
                target = sections[-1]["blocks"]
            elif block.kind == "compute":
                continue
            elif block.kind == "glossary":
                glossary = block
            elif block.kind == "listing":
                target.append({"type": "listing", "id": self.next_id("listing"), "code": block.text,
                               "language": "python", "output": self.listing_outputs[listing_index]})
                listing_index += 1
            elif block.kind == "recording":
                recorded = self.recordings[recording_index]
                recording_index += 1
                target.append({"type": "recording", "id": self.next_id("recording"),
                               "title": block.data["title"], "kind": block.data["kind"],
                               "code": block.data["code"], "pytorch": recorded["pytorch"],
                               "gradwalk": recorded["gradwalk"]})
            else:
                target.append(self.render_block(block))
        glossary_json = []
        if glossary is not None:
            for term, meaning in glossary.data.items():
                glossary_json.append({"term": str(term), "html": self.inline_html(meaning, glossary.line)})
        defined = {g["term"] for g in glossary_json}
        undefined = [(t, line) for t, line in self.terms_used if t not in defined]
        if undefined:
            term, line = undefined[0]
            raise LessonError(source.id, line, f"the term [[{term}]] is not in the lesson's glossary "
                                               f"(::: glossary at the end of the file)")
        meta = source.meta
        return {"id": source.id, "title": meta["title"], "summary": meta["summary"], "order": meta["order"],
                "intro": intro, "sections": sections, "glossary": glossary_json,
                "numbers": {p.text: self.numbers[p.text] for p in source.placeholders}}

    def render_block(self, block):
        kind, data, line = block.kind, block.data, block.line
        if kind == "prose":
            return {"type": "prose", "id": self.next_id("prose"), "html": self.block_html(block.text, line)}
        if kind == "code":
            return {"type": "code", "id": self.next_id("code"), "code": block.text,
                    "language": block.attrs.get("language")}
        if kind == "snippet":
            title = block.attrs.get("title")
            return {"type": "snippet", "id": self.next_id("snippet"), "code": block.text,
                    "title": title if isinstance(title, str) else None, "step": bool(block.attrs.get("step"))}
        if kind == "figure":
            caption = data.get("caption")
            return {"type": "figure", "id": self.next_id("figure"), "figure": block.argument,
                    "params": data.get("params") or {},
                    "caption_html": self.inline_html(caption, line) if caption else None}
        if kind == "quiz":
            block_id = self.next_id("quiz")
            return {"type": "quiz", "id": block_id, "questions": [
                {"id": f"q{n}", "question_html": self.inline_html(q["question"], line),
                 "choices": [{"id": f"c{m}", "html": self.inline_html(c["text"], line),
                              "correct": c.get("correct") is True,
                              "feedback_html": self.block_html(c["feedback"], line)}
                             for m, c in enumerate(q["choices"], 1)]}
                for n, q in enumerate(data, 1)]}
        if kind == "exam":
            return {"type": "exam", "id": self.next_id("exam"), "questions": [
                {"id": f"q{n}", "question_html": self.block_html(q["question"], line),
                 "answer_html": self.block_html(q["answer"], line), "marks": q.get("marks", 1)}
                for n, q in enumerate(data, 1)]}
        if kind == "cards":
            return {"type": "cards", "id": self.next_id("cards"), "cards": [
                {"id": f"card{n}", "front_html": self.inline_html(c["front"], line),
                 "back_html": self.inline_html(c["back"], line)} for n, c in enumerate(data, 1)]}
        if kind == "exercise":
            snippet = data.get("snippet")
            return {"type": "exercise", "id": self.next_id("exercise"),
                    "title": self.fill_plain(str(data["title"])),
                    "title_html": self.inline_html(str(data["title"]), line),
                    "problem_html": self.block_html(data["problem"], line),
                    "answer_html": self.block_html(data["answer"], line),
                    "snippet": self.fill_plain(snippet) if isinstance(snippet, str) else None}
        raise LessonError(self.source.id, line, f"cannot render a {kind} block")


def render(source, results):
    return Renderer(source, results).render()


def section_list(source):
    """The sections' ids and titles without computing anything (placeholders shown as "…")."""
    taken, sections = set(), []
    for block in source.blocks:
        if block.kind == "heading":
            title_html = MARKDOWN.renderInline(TOKEN.sub("…", block.text))
            title = html.unescape(re.sub(r"<[^>]+>", "", title_html))
            sections.append({"id": _slug(title, taken), "title": title})
    return sections


def plain_text(lesson):
    """Every word a student reads in a rendered lesson (for the originality check)."""
    parts = [lesson["title"], lesson["summary"]]

    def add(value):
        if isinstance(value, str):
            parts.append(value)

    for block in lesson["intro"] + [b for s in lesson["sections"] for b in [{"html": s["title"]}, *s["blocks"]]]:
        for key in ("html", "caption_html", "problem_html", "answer_html", "title"):
            add(block.get(key))
        for q in block.get("questions", ()):
            add(q.get("question_html"))
            add(q.get("answer_html"))
            for c in q.get("choices", ()):
                add(c["html"])
                add(c["feedback_html"])
        for c in block.get("cards", ()):
            add(c["front_html"])
            add(c["back_html"])
    for g in lesson["glossary"]:
        add(g["html"])
    text = " ".join(parts)
    text = re.sub(r"<[^>]+>", " ", text)
    return html.unescape(text)
