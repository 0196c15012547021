# ruff: noqa: E501  (the expected table is as wide as gradwalk prints it)
"""`gradwalk trace` runs an ordinary PyTorch script on gradwalk and prints each backward pass;
`--torch` runs it on real PyTorch too and reports no difference for the seeds' scripts."""
import json
import subprocess
import sys
import textwrap

import torch  # noqa: F401  (--torch needs real PyTorch: fail, don't skip, when it is missing)

NEURON = """\
import torch

w = torch.tensor(0.5, requires_grad=True)
x = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(-0.3, requires_grad=True)
y = torch.tanh(w * x + b)
y.backward()
"""

MSE = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 1))
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
    model[0].bias.fill_(0.1)
    model[2].weight.copy_(torch.tensor([[0.7, -0.8]]))
    model[2].bias.fill_(-0.2)
x = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
t = torch.tensor([[1.0], [0.0]])
loss = F.mse_loss(model(x), t)
loss.backward()
"""

NEURON_TABLE = """\
pass 1: y.backward()  (line 7)
step  node               seq  gradient in  gradients out                                            ready queue
----  -----------------  ---  -----------  -------------------------------------------------------  ------------------------------------
1     TanhBackward0      2    1            0.6347 -> AddBackward0                                   AddBackward0
2     AddBackward0       1    0.6347       0.6347 -> MulBackward0; 0.6347 -> AccumulateGrad(b)      AccumulateGrad(b), MulBackward0
3     AccumulateGrad(b)  MAX  0.6347       b.grad = 0.6347                                          MulBackward0
4     MulBackward0       0    0.6347       1.269 -> AccumulateGrad(w); 0.3174 -> AccumulateGrad(x)  AccumulateGrad(w), AccumulateGrad(x)
5     AccumulateGrad(w)  MAX  1.269        w.grad = 1.269                                           AccumulateGrad(x)
6     AccumulateGrad(x)  MAX  0.3174       x.grad = 0.3174                                          -
grads: w = 1.269, x = 0.3174, b = 0.6347
"""


def trace(tmp_path, source, *options):
    """`gradwalk trace` in a fresh process, so sequence numbers start at 0 as in the seeds."""
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source))
    return subprocess.run([sys.executable, "-m", "gradwalk", "trace", str(script), *options],
                          capture_output=True, text=True, timeout=120)


def test_neuron_prints_the_seeds_table(tmp_path):
    done = trace(tmp_path, NEURON)
    assert done.returncode == 0, done.stderr
    assert done.stdout == NEURON_TABLE + "\n"


def test_json_output_is_the_lab_pass_format(tmp_path):
    done = trace(tmp_path, NEURON + "print('hello from the script')\n", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)  # the script's own print went to stderr
    assert "hello from the script" in done.stderr
    (first,) = out["passes"]
    assert first["call"] == "y.backward()" and first["line"] == 7
    assert [s["name"] for s in first["steps"]][:2] == ["TanhBackward0", "AddBackward0"]
    assert first["grads"]["w"]["data"] == first["steps"][4]["leaf_grads"][0]["value"]["data"]
    assert first["graph"]["seed"] == {"shape": [], "dtype": "float32", "data": 1.0}


def test_torch_comparison_of_the_neuron_has_no_difference(tmp_path):
    done = trace(tmp_path, NEURON, "--torch")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("no differences")
    assert "| TanhBackward0      2    1       |" in done.stdout


def test_torch_comparison_of_an_mse_loss_model_has_no_difference(tmp_path):
    done = trace(tmp_path, MSE, "--torch")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "AccumulateGrad(model.0.weight)" in done.stdout
    assert done.stdout.rstrip().endswith("no differences")


def test_topo_mode_differs_from_pytorch_in_order_only(tmp_path):
    done = trace(tmp_path, NEURON, "--mode", "topo", "--torch")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    marked = [line for line in lines if line.endswith("<- order")]
    assert len(marked) == 2 and "AccumulateGrad(x)" in marked[0]
    assert "<- gradient" not in done.stdout and "<- node" not in done.stdout
    assert lines[-1] == "2 difference(s)"


def test_a_failing_second_pass_is_shown_and_the_script_fails(tmp_path):
    done = trace(tmp_path, NEURON + "y.backward()\n")
    assert done.returncode == 1
    assert "pass 2: y.backward()  (line 8)" in done.stdout
    assert "1     TanhBackward0  2    1            RuntimeError   -" in done.stdout
    assert "error: RuntimeError: Trying to backward through the graph a second time" in done.stdout
    assert "Traceback" in done.stderr


def test_autograd_grad_is_traced_too(tmp_path):
    source = """\
    import torch
    x = torch.tensor(3.0, requires_grad=True)
    (g,) = torch.autograd.grad(x * x, x)
    """
    done = trace(tmp_path, source, "--json")
    assert done.returncode == 0, done.stderr
    (only,) = json.loads(done.stdout)["passes"]
    assert only["result"] == [{"shape": [], "dtype": "float32", "data": 6.0}]
    assert only["call"] == "(g,) = torch.autograd.grad(x * x, x)"


def test_torch_imports_are_served_by_gradwalk_and_restored():
    import gradwalk
    from gradwalk.tracing.torch_alias import torch_served_by_gradwalk

    real = sys.modules["torch"]
    with torch_served_by_gradwalk():
        import torch as served
        import torch.nn.functional as F
        from torch import nn

        assert served is gradwalk and F is gradwalk.nn.functional and nn is gradwalk.nn
    assert sys.modules["torch"] is real and sys.modules["torch.nn"].__name__ == "torch.nn"
    assert gradwalk.__spec__.name == "gradwalk"


def test_a_missing_gradwalk_module_says_so():
    from gradwalk.tracing.torch_alias import torch_served_by_gradwalk

    with torch_served_by_gradwalk():
        try:
            import torch.distributed.rpc  # noqa: F401
        except ModuleNotFoundError as e:
            assert "gradwalk has no gradwalk.distributed" in str(e)
        else:
            raise AssertionError("expected ModuleNotFoundError")
