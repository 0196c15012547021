"""Modules, optimizers and imports the third real-code corpus needed (the custom-Function conv/BN
tutorial's Adadelta, d2l's ParameterDict, minGPT's ``torch.cuda.amp.autocast``, the forward-AD
tutorial's ``functorch``), as our own snippets run under gradwalk and under PyTorch."""
import contextlib
import io
import runpy
import textwrap
import warnings

import pytest
import torch  # noqa: F401  (real PyTorch: these tests fail without it)

from gradwalk.tracing.torch_alias import torch_served_by_gradwalk
from parity import assert_same, assert_same_error, run_both


def printed_by_both(tmp_path, script):
    """What ``script`` prints run as a file under PyTorch and under gradwalk (``import torch``
    served by gradwalk), warnings silenced."""
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(script))
    outputs = []
    for serve in (contextlib.nullcontext, torch_served_by_gradwalk):
        buffer = io.StringIO()
        with serve(), contextlib.redirect_stdout(buffer), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runpy.run_path(str(path), run_name="__main__")
        outputs.append(buffer.getvalue())
    return outputs


# ---------------------------------------------------------------- optim.Adadelta

@pytest.mark.parametrize("options", ["", "lr=0.5, rho=0.8, weight_decay=0.01", "maximize=True, eps=1e-4"])
def test_adadelta_steps_match_pytorch(options):
    """PyTorch's order of operations and its fused addcmul; its vectorised float32 sqrt is not
    correctly rounded (NumPy's is), so a last bit may differ: a few ulp after 30 steps."""
    gw, pt = run_both(f"""
        torch.manual_seed(0)
        p = torch.nn.Parameter(torch.randn(1000))
        c = torch.rand(1000)
        opt = torch.optim.Adadelta([p], {options})
        for _ in range(30):
            opt.zero_grad()
            (p * p * c).sum().backward()
            opt.step()
        state = opt.state_dict()["state"][0]
    """)
    assert_same(gw["p"], pt["p"], rtol=5e-6, atol=1e-9)
    for key in ("step", "square_avg", "acc_delta"):
        assert_same(gw["state"][key], pt["state"][key], rtol=5e-6, atol=1e-12)
    assert gw["opt"].param_groups[0].keys() == pt["opt"].param_groups[0].keys()


@pytest.mark.parametrize("bad", ["lr=-1", "rho=1.5", "eps=-1", "weight_decay=-1"])
def test_adadelta_validates_its_arguments_as_pytorch(bad):
    assert_same_error(f"torch.optim.Adadelta([torch.nn.Parameter(torch.ones(1))], {bad})")


# ---------------------------------------------------------------- ParameterList / ParameterDict

def test_parameter_dict_and_list_register_print_and_save_as_pytorch():
    gw, pt = run_both("""
        params = torch.nn.ParameterDict()
        params.update({"param2": torch.nn.Parameter(torch.ones(2, 3))})
        one_line = repr(params)
        d = torch.nn.ParameterDict({"a": torch.nn.Parameter(torch.ones(2)),
                                    "b": torch.zeros(3, dtype=torch.float64)})
        l = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(3, 2))])
        l.append(torch.zeros(1))

        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.pd = d
                self.pl = l

        m = M()
        text = repr(m)
        names = [n for n, _ in m.named_parameters()]
        keys = list(m.state_dict())
        kinds = [type(d["b"]).__name__, type(l[2]).__name__, l[-1].shape, len(l), len(d), "a" in d]
        popped = d.pop("a").shape
        after = list(d.keys())
    """)
    for name in ("one_line", "text", "names", "keys", "kinds", "popped", "after"):
        assert gw[name] == pt[name], name
    assert gw["one_line"] == "ParameterDict(  (param2): Parameter containing: [torch.FloatTensor of size 2x3])"


def test_a_parameter_dict_trains():
    gw, pt = run_both("""
        torch.manual_seed(0)
        d = torch.nn.ParameterDict({"w": torch.randn(3, 2), "b": torch.zeros(2)})
        opt = torch.optim.SGD(d.parameters(), lr=0.1)
        loss = (torch.ones(4, 3) @ d["w"] + d["b"]).pow(2).sum()
        loss.backward()
        opt.step()
    """)
    assert_same(gw["d"]["w"], pt["d"]["w"])
    assert_same(gw["d"]["b"], pt["d"]["b"])


# ---------------------------------------------------------------- amp on a machine without a GPU

def test_cuda_autocast_and_grad_scaler_are_disabled_without_a_gpu(tmp_path):
    ours, theirs = printed_by_both(tmp_path, """
        import torch
        from torch.cuda.amp import autocast, GradScaler

        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(3, 2)

            @autocast()
            def forward(self, x):
                return self.fc(x)

        torch.manual_seed(0)
        block = Block()
        print(block(torch.ones(1, 3)).dtype)
        with torch.autocast(device_type="cuda"):
            print((torch.ones(2, 2) @ torch.ones(2, 2)).dtype)
        with torch.amp.autocast("cuda", enabled=False):
            print("off")
        scaler = torch.amp.GradScaler("cuda")
        print(scaler.is_enabled(), GradScaler().is_enabled())
        opt = torch.optim.SGD(block.parameters(), lr=0.1)
        loss = block(torch.ones(1, 3)).sum()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        print(block.fc.bias)
    """)
    assert ours == theirs


def test_cuda_autocast_warns_as_pytorch_does():
    import gradwalk

    for lib in (torch, gradwalk):
        with pytest.warns(FutureWarning, match=r"torch\.cuda\.amp\.autocast\(args\.\.\.\)` is deprecated"), \
                pytest.warns(UserWarning, match="CUDA is not available"):
            lib.cuda.amp.autocast()


def test_cpu_autocast_is_refused_with_a_clear_error():
    import gradwalk

    with pytest.raises(NotImplementedError, match="autocast on the CPU"):
        with gradwalk.autocast("cpu"):
            pass


# ---------------------------------------------------------------- functorch

def test_import_functorch_is_served_by_gradwalk(tmp_path):
    ours, theirs = printed_by_both(tmp_path, """
        import torch
        import functorch as ft

        torch.manual_seed(0)
        def fn(x, y):
            return x ** 2 + y ** 2
        primal_out, tangent_out = ft.jvp(fn, (torch.ones(3), torch.arange(3.)), (torch.ones(3), torch.ones(3)))
        print(primal_out, tangent_out)
        model = torch.nn.Linear(3, 2)
        x = torch.randn(4, 3)
        func, params, buffers = ft.make_functional_with_buffers(model)
        tangents = tuple(torch.ones_like(p) for p in params)
        out, jvp_out = ft.jvp(lambda params: func(params, buffers, x), (params,), (tangents,))
        print(out.detach(), jvp_out.detach())  # (PyTorch names the output's node <Identity>; gradwalk AliasBackward0)
        func2, params2 = ft.make_functional(model)
        print(func2(params2, x).detach())
        print(ft.vmap(torch.dot)(torch.ones(2, 3), torch.ones(2, 3)), ft.grad(lambda t: (t * t).sum())(x[0]))
    """)
    assert ours == theirs


# ---------------------------------------------------------------- parametrize's checks at registration

def test_register_parametrization_runs_the_parametrization_once_to_check_it():
    gw, pt = run_both("""
        calls = []
        class Noisy(torch.nn.Module):
            def forward(self, X):
                calls.append("computed")
                return X
        class Double(torch.nn.Module):
            def forward(self, X):
                calls.append("double")
                return X * 2
        layer = torch.nn.Linear(4, 4)
        torch.nn.utils.parametrize.register_parametrization(layer, "weight", Noisy())
        at_registration = list(calls)
        torch.nn.utils.parametrize.register_parametrization(layer, "weight", Double())
        at_second = list(calls)
    """)
    assert gw["at_registration"] == pt["at_registration"] == ["computed"]
    assert gw["at_second"] == pt["at_second"]


@pytest.mark.parametrize("second", [False, True])
@pytest.mark.parametrize("forward", ["return X[:2]", "return X.double()", "return X.tolist()"])
def test_a_parametrization_that_changes_shape_or_dtype_is_refused(forward, second):
    assert_same_error(f"""
        class Bad(torch.nn.Module):
            def forward(self, X):
                {forward}
        layer = torch.nn.Linear(3, 3)
        if {second}:
            torch.nn.utils.parametrize.register_parametrization(layer, "weight", torch.nn.Identity())
        torch.nn.utils.parametrize.register_parametrization(layer, "weight", Bad())
    """)
