"""`gradwalk trace --torch` on the scripts a new user runs first: an ordinary training loop that
zeroes its gradients (each pass compared as `.grad` stood after it, on both sides), and a script
that reaches for an API gradwalk lacks (named, with its line)."""
import json
import subprocess
import sys
import textwrap

import torch  # noqa: F401  (--torch needs real PyTorch: fail, don't skip, when it is missing)

TRAINING_LOOP = """\
import torch
import torch.nn as nn

model = nn.Linear(2, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.5, -0.25]]))
    model.bias.fill_(0.1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.tensor([[1.0, 2.0], [3.0, -1.0]])
t = torch.tensor([[1.0], [0.0]])
for step in range(3):
    opt.zero_grad()
    loss = ((model(x) - t) ** 2).mean()
    loss.backward()
    opt.step()
"""


def trace(tmp_path, source, *options):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source))
    return subprocess.run([sys.executable, "-m", "gradwalk", "trace", str(script), *options],
                          capture_output=True, text=True, timeout=180)


def test_a_training_loop_that_zeroes_its_gradients_has_no_difference(tmp_path):
    done = trace(tmp_path, TRAINING_LOOP, "--torch")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("pass ") == 3
    assert "DIFFERENT" not in done.stdout
    assert done.stdout.rstrip().endswith("no differences")


def test_each_pass_reports_the_gradients_it_left(tmp_path):
    done = trace(tmp_path, TRAINING_LOOP, "--json")
    assert done.returncode == 0, done.stderr
    passes = json.loads(done.stdout)["passes"]
    biases = [p["grads"]["model.bias"]["data"] for p in passes]
    assert len(set(map(str, biases))) == 3  # three different gradients, not the last one thrice
    # each is what that pass's AccumulateGrad wrote
    for p, bias in zip(passes, biases):
        written = [r for r in p["steps"] if r["name"] == "torch::autograd::AccumulateGrad"
                   and r["leaf_grads"] and r["leaf_grads"][0]["leaf"] == "model.bias"]
        assert written[0]["leaf_grads"][0]["value"]["data"] == bias


def test_a_script_needing_an_api_gradwalk_lacks_is_told_which(tmp_path):
    done = trace(tmp_path, """\
        import torch
        x = torch.ones(2, 3, requires_grad=True)
        (x * 2).sum().backward()
        y = torch.nn.Dropout3d(0.5)(x)
    """)
    assert done.returncode == 1
    assert "gradwalk lacks torch.nn.Dropout3d, which this script uses (line 4)" in done.stdout
