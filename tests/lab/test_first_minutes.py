"""Issue 14's first five minutes: the demo's table lines up, `gradwalk train` says where its plot
went and prints one progress line into a log (not one per epoch), a missing extra is named,
and `gradwalk lab` answers at once while its workers start."""
import io
import subprocess
import sys
import time

import httpx

from gradwalk import demo
from gradwalk.lab.presets import PRESETS
from gradwalk.train import cli as train_cli


def test_the_demo_table_is_aligned(capsys):
    demo.main([])
    lines = capsys.readouterr().out.splitlines()
    start = lines.index(next(line for line in lines if line.lstrip().startswith("step")))
    table = lines[start:start + 7]
    assert len({len(line) for line in table}) == 1, table  # every row as wide as the heading
    seq_end = table[0].index("seq") + len("seq")
    assert all(row[seq_end - 1].isdigit() for row in table[1:]), table


def test_train_says_where_its_plot_went_and_logs_one_progress_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert train_cli.main(["xor", "--epochs", "20"]) == 0
    captured = capsys.readouterr()
    assert f"plot            written to {tmp_path / 'gradwalk-xor.png'}" in captured.out
    assert (tmp_path / "gradwalk-xor.png").is_file()
    progress = [line for line in captured.err.replace("\r", "\n").splitlines() if line.strip()]
    assert len(progress) == 1 and progress[0].startswith("train xor: 20/20 epochs in ")


def test_a_missing_extra_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # as if not installed

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    try:
        train_cli._progress(3, "xor", True, Terminal())
    except SystemExit as stop:
        assert "pip install 'gradwalk[train]'" in str(stop) and "tqdm" in str(stop)
    else:
        raise AssertionError("no message")


def test_the_lab_answers_at_once_while_its_workers_start():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "gradwalk", "lab", "--no-browser", "--port",
                               str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                health = httpx.get(f"{url}/api/health")
                break
            except httpx.TransportError:
                time.sleep(0.05)
        assert health.status_code == 200
        # the first snippet waits for a worker if none is up yet, then runs
        answer = httpx.post(f"{url}/api/run", json={"source": PRESETS[0]["source"]}, timeout=60)
        assert answer.json()["ok"]
    finally:
        server.terminate()
        server.communicate(timeout=20)
