"""The lessons as content: every lesson renders, every number it states is computed by gradwalk and
agrees with real PyTorch, every listing prints what it prints on PyTorch, and every sentence is
ours (no run of 12 words shared with a seed document)."""
import json
import re
import shutil

import pytest
import torch  # noqa: F401  (these tests compare with PyTorch: without it they must fail, not skip)

from gradwalk.lessons import CONTENT_DIR, LessonStore, build_lesson
from gradwalk.lessons.check import check_lesson
from gradwalk.lessons.compute import compute
from gradwalk.lessons.originality import seed_dir, seed_texts, shared_runs, words
from gradwalk.lessons.parse import LessonError, plain_text, read_lesson

LESSONS = sorted(CONTENT_DIR.glob("*.md"))
IDS = [p.stem for p in LESSONS]
STORE = LessonStore()  # each lesson computed once for the tests below that only read it


def test_there_are_the_three_seed_lessons_at_least():
    assert {"chain-rule", "autodiff", "engine"} <= set(IDS)
    assert [e["id"] for e in LessonStore().index()][:3] == ["chain-rule", "autodiff", "engine"]


@pytest.mark.parametrize("path", LESSONS, ids=IDS)
def test_every_number_agrees_with_pytorch_and_every_sentence_is_ours(path):
    assert check_lesson(path, with_torch=True) == []


@pytest.mark.parametrize("path", LESSONS, ids=IDS)
def test_each_lesson_has_every_kind_of_self_check(path):
    lesson = STORE.get(path.stem)
    blocks = [b for b in lesson["intro"]] + [b for s in lesson["sections"] for b in s["blocks"]]
    kinds = [b["type"] for b in blocks]
    quiz_questions = sum(len(b["questions"]) for b in blocks if b["type"] == "quiz")
    exam_questions = sum(len(b["questions"]) for b in blocks if b["type"] == "exam")
    cards = sum(len(b["cards"]) for b in blocks if b["type"] == "cards")
    assert quiz_questions >= 5 and exam_questions >= 4 and cards >= 6
    assert kinds.count("exercise") >= 3 and "snippet" in kinds
    assert "figure" in kinds or path.stem == "engine"  # lesson 3 shows the engine, not the figures
    assert len(lesson["glossary"]) >= 8
    for quiz in (b for b in blocks if b["type"] == "quiz"):
        for question in quiz["questions"]:
            assert sum(c["correct"] for c in question["choices"]) == 1
            assert all(c["feedback_html"].strip() for c in question["choices"])
    ids = [b["id"] for b in blocks]
    assert len(ids) == len(set(ids))


def test_lesson_one_has_the_seeds_four_exercises_with_their_results():
    lesson = STORE.get("chain-rule")
    answers = [re.sub(r"<[^>]+>", "", b["answer_html"]) for s in lesson["sections"] for b in s["blocks"]
               if b["type"] == "exercise"]
    assert len(answers) >= 4
    power, tanh_slope, neuron, dual = answers[:4]
    assert "= 12" in power and "12.000001" in power  # with the central difference beside it
    assert "slope is 1 - 0^2 = 1" in tanh_slope and "0.0707" in tanh_slope
    for gradient in ("x_1 = 0.5", "x_2 = -1", "\\partial b = 1", "w_1 = 1", "w_2 = 2"):
        assert gradient in neuron
    assert "0.15252" in dual


@pytest.mark.parametrize("path", LESSONS, ids=IDS)
def test_every_embedded_snippet_runs_in_the_lab(path):
    from gradwalk.lab.interpreter import run_snippet

    lesson = STORE.get(path.stem)
    blocks = [b for s in lesson["sections"] for b in s["blocks"]] + lesson["intro"]
    codes = [b["code"] for b in blocks if b["type"] == "snippet"]
    codes += [b["snippet"] for b in blocks if b["type"] == "exercise" and b["snippet"]]
    for code in codes:
        result = run_snippet(code)  # a SnippetError (the lab refuses it) fails the test
        # an error raised by a backward pass is reported in that pass (a snippet may show one)
        errors = [result.get("error")] + [p.get("error") for p in result.get("passes", [])]
        assert result["ok"] or any(errors), code


# ---------------------------------------------------------------- the format, on a sample lesson

SAMPLE = CONTENT_DIR.parents[3] / "tests" / "lessons" / "fixtures" / "sample.md"


@pytest.fixture(scope="module")
def sample():
    return build_lesson(SAMPLE)


def test_placeholders_are_filled_by_gradwalk_in_prose_math_tables_and_questions(sample):
    assert sample["numbers"] == {"dL_dw": "12", "dL_dw:.2f": "12.00", "w.grad": "12",
                                 "shape": "(2, 3)", "grads": "[12, 0.5]"}
    intro = sample["intro"][0]["html"]
    assert "dL/dw = 12 (or 12.00)" in intro
    assert '<span class="math inline">\\partial L/\\partial w = 12</span>' in intro
    table = sample["sections"][0]["blocks"][0]["html"]
    assert "<td>(2, 3)</td>" in table and "<td>[12, 0.5]</td>" in table
    quiz = next(b for b in sample["sections"][1]["blocks"] if b["type"] == "quiz")
    assert quiz["questions"][0]["choices"][0] == {"id": "c1", "html": "12", "correct": True,
                                                   "feedback_html": "<p>Yes, 2 e x.</p>\n"}
    assert sample["computed_with"]["engine"] == "gradwalk"


def test_terms_become_spans_but_not_inside_code(sample):
    assert '<span class="term" data-term="leaf">leaf</span>' in sample["intro"][0]["html"]
    assert sample["glossary"] == [{"term": "leaf", "html": "A tensor you made with <code>requires_grad=True</code>."}]


def test_a_listing_shows_what_it_printed_and_recordings_show_both_engines(sample):
    blocks = {b["type"]: b for b in sample["sections"][0]["blocks"] + sample["sections"][1]["blocks"]}
    assert blocks["listing"]["output"] == "tensor(12.)\n"
    recording = next(b for b in sample["sections"][1]["blocks"]
                     if b["type"] == "recording" and b["kind"] == "hook-order")
    assert recording["pytorch"]["source"] == "live" and recording["pytorch"]["engine"] == "pytorch"
    names = [r["node"] for r in recording["pytorch"]["rows"]]
    assert names == ["TanhBackward0", "SubBackward0", "MulBackward0", "torch::autograd::AccumulateGrad"]
    assert [r["seq"] for r in recording["gradwalk"]["rows"]] == [2, 1, 0, 2**64 - 1]
    assert recording["gradwalk"]["rows"] == recording["pytorch"]["rows"]


def test_the_profile_recording_links_forward_ops_to_their_nodes(sample):
    recording = [b for s in sample["sections"] for b in s["blocks"] if b["type"] == "recording"][1]
    for side in ("pytorch", "gradwalk"):
        rows = recording[side]["rows"]
        forward = [(r["name"], r["seq"], r["node"]) for r in rows if r["phase"] == "forward"]
        assert forward == [("aten::mul", 0, "MulBackward0"), ("aten::sub", 1, "SubBackward0"),
                           ("aten::tanh", 2, "TanhBackward0")]
        inside_mul = [r["name"] for r in rows if r["depth"] == 1 and r["node"] == "MulBackward0"]
        assert inside_mul == ["aten::mul", "aten::mul"]  # grad * x and grad * w


def test_without_pytorch_the_shipped_recording_is_shown(monkeypatch):
    import sys

    lesson_compute = sys.modules["gradwalk.lessons.compute"]  # the package's `compute` is the function

    monkeypatch.setattr(lesson_compute, "torch_installed", lambda: False)
    results = compute(read_lesson(SAMPLE))
    assert [r["pytorch"]["source"] for r in results["recordings"]] == ["shipped", "shipped"]
    assert results["recordings"][0]["pytorch"]["version"] == "2.13.0"


def write(tmp_path, name, text):
    path = tmp_path / f"{name}.md"
    path.write_text(text)
    return path


HEAD = "---\ntitle: T\nsummary: S\norder: 1\n---\n"


@pytest.mark.parametrize("body, message", [
    ("{{nothing}}\n", "the placeholder {{nothing}} cannot be filled: KeyError"),
    ("```python compute\nx = 1 / 0\n```\n", "line 7: the compute block raised ZeroDivisionError"),
    ("::: quiz\n- question: Q?\n  choices:\n    - text: a\n      feedback: f\n    - text: b\n      feedback: g\n:::\n",
     "line 6: quiz question 1 has 0 choices marked correct: true"),
    ("::: figure nope\n:::\n", "line 6: '::: figure' needs a figure id"),
    ("::: quiz\n- question: [a, b\n:::\n", "is not valid YAML"),
    ("A [[leaf]].\n", "the term [[leaf]] is not in the lesson's glossary"),
    ("::: cards\n- front: x\n", "has no closing ':::' line"),
    ("```python snippet\nx\n", "is never closed"),
    ("{{ 1 + 2 }}\n", "a '{{' or '}}' that is not a placeholder"),
])
def test_a_teachers_mistake_is_named_with_its_line(tmp_path, body, message):
    path = write(tmp_path, "broken", HEAD + body)
    with pytest.raises(LessonError) as error:
        build_lesson(path)
    assert message in str(error.value) and "broken.md" in str(error.value)


def test_front_matter_is_required(tmp_path):
    with pytest.raises(LessonError, match="title:, summary: and order:"):
        build_lesson(write(tmp_path, "x", "# no front matter\n"))
    with pytest.raises(LessonError, match="needs order:"):
        build_lesson(write(tmp_path, "y", "---\ntitle: T\nsummary: S\n---\n"))


def test_a_teachers_edit_shows_on_the_next_request(tmp_path):
    path = write(tmp_path, "edit", HEAD + "```python compute\nn = 2\n```\nn is {{n}}.\n")
    store = LessonStore(tmp_path)
    assert "n is 2." in store.get("edit")["intro"][0]["html"]
    path.write_text(HEAD + "```python compute\nn = 3\n```\nn is {{n}}.\n")
    assert "n is 3." in store.get("edit")["intro"][0]["html"]
    with pytest.raises(KeyError):
        store.get("missing")


def test_raw_html_in_a_lesson_is_shown_as_text(tmp_path):
    lesson = build_lesson(write(tmp_path, "h", HEAD + "<script>alert(1)</script> and <b>bold</b>\n"))
    assert "<script>" not in json.dumps(lesson) and "&lt;script&gt;" in lesson["intro"][0]["html"]


# ---------------------------------------------------------------- our own words

def test_the_originality_check_finds_a_copied_sentence_despite_punctuation():
    seed = "Reverse mode seeds that one loss with 1 and reaches every weight in one backward pass."
    ours = "As they say: reverse-mode seeds that one loss with 1, and reaches all the weights at once."
    assert shared_runs(ours, [seed]) == []  # 10 words in a row are shared: fine
    copied = "Reverse mode seeds that ONE loss with 1 and reaches every weight in one backward pass!"
    assert shared_runs(copied, [seed]) == [" ".join(words(seed))]


def test_the_seed_documents_are_there_to_check_against():
    assert len(seed_texts()) == 3, f"the seeds are expected in {seed_dir()}"


def test_the_sample_lesson_plain_text_holds_every_field(sample):
    text = plain_text(sample)
    for piece in ("A sample lesson", "dL/dw = 12", "Yes, 2 e x.", "It multiplies numbers.", "It is 12."):
        assert piece in text


def test_api_lists_and_serves_lessons(tmp_path):
    from starlette.testclient import TestClient

    from gradwalk.lab.server import create_app

    shutil.copy(SAMPLE, tmp_path / "sample.md")
    (tmp_path / "recordings").mkdir()
    for f in (SAMPLE.parent / "recordings").glob("*.json"):
        shutil.copy(f, tmp_path / "recordings" / f.name)
    write(tmp_path, "broken", HEAD + "{{missing}}\n")
    with TestClient(create_app(pool_size=1, lessons_dir=tmp_path)) as client:
        index = client.get("/api/lessons").json()
        assert [e["id"] for e in index] == ["broken", "sample"] or [e["id"] for e in index] == ["sample", "broken"]
        sample_entry = next(e for e in index if e["id"] == "sample")
        assert sample_entry["sections"] == [{"id": "the-graph", "title": "The graph"},
                                            {"id": "check-yourself", "title": "Check yourself"}]
        answer = client.get("/api/lessons/sample")
        assert answer.status_code == 200 and answer.json()["numbers"]["dL_dw"] == "12"
        assert client.get("/api/lessons/nope").json() == {"detail": "no lesson named 'nope'"}
        broken = client.get("/api/lessons/broken")
        assert broken.status_code == 500 and "{{missing}}" in broken.json()["detail"]
        for page in ("/", "/lab", "/lessons/sample", "/figures/xor"):
            response = client.get(page)
            assert response.status_code == 200 and "text/html" in response.headers["content-type"]
