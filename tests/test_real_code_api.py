"""APIs that real scripts use, run under gradwalk and under PyTorch side by side.

Each test is the kind of line found in tutorials, lecture notebooks and textbooks (NumPy-style
keywords, ``torch.func.functional_call``, ``torch.autograd.Variable``, ``nn.utils``, ...), run by
both libraries; values, shapes and errors must agree.
"""
import textwrap

import pytest
import torch  # noqa: F401  (real PyTorch: these tests fail without it)

from parity import assert_same, run_both, run_in


def both_values(snippet, *names):
    gw, pt = run_both(snippet)
    for name in names:
        assert_same(gw[name], pt[name])
    return gw, pt


# ---------------------------------------------------------------- NumPy's keyword names

def test_numpy_keywords_axis_and_keepdims_as_pytorch_accepts_them():
    gw, pt = run_both("""
        x = torch.arange(12.).reshape(3, 4) - 5
        results = [
            x.sum(axis=0), torch.sum(x, axis=1, keepdims=True), x.mean(axis=0, keepdims=True),
            x.cumsum(axis=1), torch.cumsum(x, axis=0), x.max(axis=1).values,
            torch.max(x, axis=0, keepdims=True).indices, x.min(axis=1)[0], x.std(axis=0),
            x.var(axis=1, keepdims=True), x.argmax(axis=1), torch.argmin(x, axis=0),
            torch.softmax(x, axis=0), x.log_softmax(axis=1), torch.cat([x, x], axis=0),
            torch.stack([x, x], axis=1), x.unsqueeze(axis=0), x.amax(axis=1), x.logsumexp(axis=1),
            x.prod(axis=0), torch.prod(x, axis=1, keepdims=True),
        ]
    """)
    for a, b in zip(gw["results"], pt["results"], strict=True):
        assert_same(a, b)


def test_a_numpy_keyword_beside_its_pytorch_name_is_refused_as_pytorch_refuses_it():
    for library in ("gradwalk", "torch"):
        with pytest.raises(TypeError, match=r"sum\(\) got an unexpected keyword argument 'axis'"):
            run_in(library, "torch.ones(2, 3).sum(dim=0, axis=0)")


def test_factories_take_size_as_a_keyword():
    gw, pt = run_both("""
        shapes = [torch.randn(size=(2, 3)).shape, torch.zeros(size=(2,)).shape,
                  torch.ones(size=[2, 1]).shape, torch.rand(size=(1,)).shape,
                  torch.empty(size=(4,)).shape, torch.randint(0, 5, size=(3,)).shape]
        filled = torch.full(size=(2,), fill_value=3.)
        zeros = torch.zeros(size=(2, 2), dtype=torch.float64)
    """)
    assert gw["shapes"] == pt["shapes"]
    assert_same(gw["filled"], pt["filled"])
    assert_same(gw["zeros"], pt["zeros"])


# ---------------------------------------------------------------- utils.data

def test_a_sampler_with_replacement_draws_lazily_as_pytorchs_does():
    # the lecture scripts' "train for a fixed number of steps" loader: 1e10 samples, read a few
    gw, pt = run_both("""
        from itertools import islice
        data = torch.utils.data.TensorDataset(torch.arange(10.).reshape(5, 2), torch.arange(5))
        sampler = torch.utils.data.RandomSampler(data, replacement=True, num_samples=int(1e10))
        loader = torch.utils.data.DataLoader(data, batch_size=4, sampler=sampler)
        batches = list(islice(loader, 3))
        sizes = len(sampler), len(loader), [tuple(x.shape) for x, y in batches]
        in_range = all(0 <= int(i) < 5 for x, y in batches for i in y)
    """)
    assert gw["sizes"] == pt["sizes"] == (10**10, 2_500_000_000, [(4, 2)] * 3)
    assert gw["in_range"] and pt["in_range"]


# ---------------------------------------------------------------- torch.func with modules

MLP = """
nn, F = torch.nn, torch.nn.functional
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 3)
    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))

torch.manual_seed(0)   # the same weights in both libraries
model = MLP()
data, targets = torch.arange(20.).reshape(5, 4) / 10, torch.tensor([0, 1, 2, 1, 0])
"""


def test_per_sample_gradients_with_functional_call_grad_and_vmap():
    # the per-sample-gradients tutorial: grad of a functional_call'd loss, vmapped over samples
    gw, pt = run_both(MLP + textwrap.dedent("""
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}
        def compute_loss(params, buffers, sample, target):
            predictions = torch.func.functional_call(model, (params, buffers), (sample.unsqueeze(0),))
            return F.cross_entropy(predictions, target.unsqueeze(0))
        per_sample = torch.func.vmap(torch.func.grad(compute_loss), in_dims=(None, None, 0, 0))(
            params, buffers, data, targets)
        zeros = {k: torch.zeros_like(v) for k, v in params.items()}
        with_zeros = torch.func.functional_call(model, zeros, data[:2])
        untouched = model.fc1.weight.sum()
    """))
    assert list(gw["per_sample"]) == list(pt["per_sample"])
    for name in pt["per_sample"]:
        assert_same(gw["per_sample"][name], pt["per_sample"][name], rtol=1e-5, atol=1e-6)
    assert_same(gw["with_zeros"], pt["with_zeros"])
    assert_same(gw["untouched"], pt["untouched"], rtol=1e-5)


def test_model_ensembling_with_stack_module_state():
    gw, pt = run_both(MLP + textwrap.dedent("""
        import copy
        models = [MLP() for i in range(3)]
        params, buffers = torch.func.stack_module_state(models)
        shapes = {k: (tuple(v.shape), v.requires_grad, v.is_leaf) for k, v in params.items()}
        base = copy.deepcopy(models[0])
        def fmodel(params, buffers, x):
            return torch.func.functional_call(base, (params, buffers), (x,))
        ensembled = torch.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, data)
        one_by_one = torch.stack([m(data) for m in models])
    """))
    assert gw["shapes"] == pt["shapes"]
    assert_same(gw["ensembled"], pt["ensembled"], rtol=1e-5, atol=1e-5)
    assert_same(gw["ensembled"], gw["one_by_one"], rtol=1e-5, atol=1e-5)


def test_functional_call_strict_names_the_keys():
    for library in ("gradwalk", "torch"):
        with pytest.raises(RuntimeError, match=r"Unexpected key\(s\): 'nope'\.\n\tMissing key\(s\): "
                                               r"'fc1.bias', 'fc1.weight', 'fc2.bias', 'fc2.weight'\."):
            run_in(library, MLP + "torch.func.functional_call(model, {'nope': torch.ones(1)}, data, strict=True)")


# ---------------------------------------------------------------- torch.autograd's old names

def test_variable_is_a_new_leaf_sharing_memory():
    gw, pt = run_both("""
        import warnings
        from_autograd = torch.autograd
        a = torch.ones(2, requires_grad=True)
        b = a * 2
        v = from_autograd.Variable(b)
        w = from_autograd.Variable(b, requires_grad=True)
        (w * 3).sum().backward()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            old = from_autograd.Variable(torch.ones(2), volatile=True)
        facts = (v.is_leaf, v.requires_grad, v.data_ptr() == b.data_ptr(), w.is_leaf,
                 isinstance(a, from_autograd.Variable), isinstance(3, from_autograd.Variable),
                 [str(c.message) for c in caught], a.grad)
    """)
    assert gw["facts"] == pt["facts"]
    assert_same(gw["w"].grad, pt["w"].grad)
    for library in ("gradwalk", "torch"):
        with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
            run_in(library, "torch.autograd.Variable([1., 2.])")


def test_autograd_profiler_is_an_attribute():
    gw, pt = run_both("""
        x = torch.ones(3, requires_grad=True)
        with torch.autograd.profiler.profile() as prof:
            with torch.autograd.profiler.record_function("my_block"):
                (x * 2).sum().backward()
        names = {e.key for e in prof.key_averages()}
    """)
    assert "my_block" in gw["names"] and "my_block" in pt["names"]


# ---------------------------------------------------------------- einsum

def _chain(t):
    names, fn = [], t.grad_fn
    while fn is not None:
        names.append(fn.name())
        following = [f for f, _ in fn.next_functions if f is not None and "AccumulateGrad" not in f.name()]
        fn = following[0] if following else None
    return names


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]), ("i,i->", [(3,), (3,)]), ("ij,ij->i", [(2, 3), (2, 3)]),
    ("bjk,jk->b", [(5, 3, 4), (3, 4)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij,jk", [(2, 3), (3, 4)]),
    ("i,j->ij", [(3,), (4,)]), ("bij,jk,bkl->bil", [(5, 2, 3), (3, 4), (5, 4, 2)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)])])
def test_einsum_builds_pytorchs_graph_and_gradients(equation, shapes):
    gw, pt = run_both(f"""
        operands = [(torch.arange(float(np.prod(s)), dtype=torch.float64).reshape(s).sin()).requires_grad_()
                    for s in {shapes!r}]
        result = torch.einsum({equation!r}, *operands)
        grads = torch.autograd.grad(result.sum(), operands)
    """)
    assert _chain(gw["result"]) == _chain(pt["result"])
    assert_same(gw["result"], pt["result"])
    for a, b in zip(gw["grads"], pt["grads"], strict=True):
        assert_same(a, b)


# ---------------------------------------------------------------- out=, devices, benchmark

def test_out_arguments_write_into_the_given_tensor():
    gw, pt = run_both("""
        import warnings
        a = torch.ones(2)
        c = torch.empty(0)
        torch.add(a, a, out=c)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            d = torch.zeros(3)
            torch.mul(a, 3, out=d)
        e = torch.zeros(2, dtype=torch.float64)
        same = torch.add(a, a, out=e) is e
        v, i = torch.empty(0), torch.empty(0, dtype=torch.long)
        torch.max(torch.tensor([[1., 3.], [4., 2.]]), 1, out=(v, i))
        m = torch.matmul(torch.ones(2, 2), torch.ones(2, 2), out=torch.empty(2, 2))
        s = torch.sum(torch.ones(2, 2), 0, out=torch.empty(2))
        facts = (c.tolist(), d.tolist(), [str(w.message)[:60] for w in caught], same, e.dtype, v.tolist(),
                 i.tolist(), m.tolist(), s.tolist())
    """)
    assert str(gw["facts"]) == str(pt["facts"])
    for library in ("gradwalk", "torch"):
        with pytest.raises(RuntimeError, match=r"add\(\): functions with out=\.\.\. arguments don't support "
                                               "automatic differentiation, but one of the arguments requires grad"):
            run_in(library, "torch.add(torch.ones(2, requires_grad=True), torch.ones(2), out=torch.empty(2))")
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
            run_in(library, "torch.add(torch.ones(2), torch.ones(2), out=torch.zeros(2, dtype=torch.long))")


def test_a_cpu_only_machine_has_no_accelerator():
    gw, pt = run_both("""
        torch.set_default_device("cpu")
        facts = (torch.accelerator.is_available(), torch.accelerator.device_count(),
                 torch.accelerator.current_accelerator(), str(torch.get_default_device()))
        torch.set_default_device(None)
    """)
    assert gw["facts"] == pt["facts"] == (False, 0, None, "cpu")
    for library in ("gradwalk", "torch"):
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available."):
            run_in(library, "torch.accelerator.current_device_index()")
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        run_in("gradwalk", "torch.set_default_device('cuda')")   # PyTorch: at the first tensor made there


def test_benchmark_timer_and_compare_print_as_pytorchs_do():
    import contextlib
    import io
    import re

    snippet = """
        import importlib
        benchmark = importlib.import_module(torch.__name__ + ".utils.benchmark")
        def batched_dot(a):
            return a.mul(a).sum(-1)
        x = torch.ones(16, 8)
        timer = benchmark.Timer(stmt="batched_dot(x)", setup="scale = 1",
                                globals={"x": x, "batched_dot": batched_dot})
        once = timer.timeit(100)
        print(once)
        auto = timer.blocked_autorange(min_run_time=0.02)
        print(auto.number_per_run >= 1, len(auto.times) >= 1, auto.median > 0, auto.mean > 0)
        results = [benchmark.Timer(stmt="batched_dot(x)", globals={"x": torch.ones(n, 8), "batched_dot": batched_dot},
                                   label="Batched dot", sub_label=f"[{n}, 8]", description=d).timeit(50)
                   for n in (1, 64) for d in ("mul/sum", "again")]
        benchmark.Compare(results).print()
    """
    shapes = []
    for library in ("gradwalk", "torch"):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            run_in(library, snippet)
        # the numbers are timings: compare the text around them
        text = re.sub(r"0x[0-9a-f]+", "ADDR", out.getvalue())
        text = re.sub(r"\d+\.\d+|\b\d+\b(?! runs)(?!, 8\])", "N", text)
        shapes.append([re.sub(r"[ -]+", " ", line).strip() for line in text.splitlines()])
    assert shapes[0] == shapes[1]
