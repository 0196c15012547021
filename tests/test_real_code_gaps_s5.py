"""The gaps real code found at the last stop, each run beside real PyTorch: ``einsum`` with
``...``, ``put_``/``put``/``index_put_`` with ``accumulate=True``, every index an indexing node
saves (``_saved_indices``), PyTorch's IndexError texts, and ``Tensor.grad_dtype``."""
import pytest
import torch  # noqa: F401  (real PyTorch: these tests fail without it)

from parity import assert_same, message, raised_by, run_both


def _graph(t):
    """The backward graph below ``t`` as nested node names (iteratively, with a stack)."""
    out, stack = [], [(t.grad_fn, 0)]
    while stack:
        fn, depth = stack.pop()
        out.append((depth, "None" if fn is None else type(fn).__name__))
        if fn is not None:
            stack.extend((f, depth + 1) for f, _ in reversed(fn.next_functions))
    return out


# ---------------------------------------------------------------- einsum with an ellipsis

@pytest.mark.parametrize("equation, shapes", [
    ("...ij,jk->...ik", [(2, 3, 4), (4, 5)]), ("i...,i...->...", [(2, 3), (2, 1)]),
    ("...ii->...i", [(2, 3, 3)]), ("ij...->", [(2, 3, 4)]), ("...", [(2, 3)]), ("a...b->...", [(2, 3, 4, 5)]),
    ("ba...->...ab", [(2, 3, 4, 5)]), ("...a,...a->...", [(3, 1, 4), (5, 4)]), ("...ij,...jk", [(5, 2, 3), (3, 4)]),
    ("bn...d,bm...d->bnm...", [(2, 3, 4, 5), (2, 6, 4, 5)]), ("i,...->i...", [(2,), (3, 1)]),
    ("ijk,jl,lm->im", [(2, 3, 4), (3, 5), (5, 6)]), ("ab,b->a", [(2, 1), (3,)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)])])
def test_einsum_with_an_ellipsis_builds_pytorchs_graph_gradients_and_second_gradients(equation, shapes):
    gw, pt = run_both(f"""
        operands = [torch.arange(float(np.prod(s)), dtype=torch.float64).reshape(s).sin().requires_grad_()
                    for s in {shapes!r}]
        result = torch.einsum({equation!r}, *operands)
        grads = torch.autograd.grad((result * result).sum(), operands, create_graph=True)
        second = torch.autograd.grad(sum((g * g).sum() for g in grads), operands)
    """)
    assert _graph(gw["result"]) == _graph(pt["result"])
    assert_same(gw["result"], pt["result"])
    for a, b in zip(gw["grads"] + gw["second"], pt["grads"] + pt["second"], strict=True):
        assert_same(a, b)


def test_einsum_accepts_the_sublist_form_and_a_list_of_operands():
    gw, pt = run_both("""
        x, y = torch.ones(2, 3), torch.ones(3, 4)
        shapes = [tuple(torch.einsum(x, [0, 1], y, [1, 2], [0, 2]).shape),
                  tuple(torch.einsum(x, [Ellipsis, 1], y, [1, 2]).shape),
                  tuple(torch.einsum("ij,jk", [x, y]).shape), tuple(torch.einsum("i j , j k -> i  k", x, y).shape)]
    """)
    assert gw["shapes"] == pt["shapes"]


@pytest.mark.parametrize("equation, shapes", [
    ("......", [(2, 3, 4)]), ("..", [(2, 3, 4)]), ("i.j", [(2, 2)]), ("...,...", [(2, 3), (4, 3)]),
    ("ijklm...->", [(2, 3, 4)]), ("...ij->...j...", [(2, 3, 4)]), ("i,j->ij.", [(2,), (3,)]),
    ("ii->i", [(2, 3)]), ("ij->ii", [(2, 3)]), ("ij->k", [(2, 3)]), ("ij->i-", [(2, 3)]), ("i1", [(2, 3)]),
    ("ij,jk", [(2, 3), (4, 5)]), ("ij,jk->ik", [(2, 3)]), ("ij->i", [(2, 3), (2,)]), ("ij", [(2,)]),
    ("...a,...a", [(2, 3, 4), (5, 4)])])
def test_a_bad_einsum_equation_raises_pytorchs_error(equation, shapes):
    snippet = f"torch.einsum({equation!r}, *[torch.ones(s) for s in {shapes!r}])"
    ours, theirs = raised_by("gradwalk", snippet), raised_by("torch", snippet)
    assert type(ours) is type(theirs) and message(ours) == message(theirs)


# ---------------------------------------------------------------- put_ / put / take / index_put_

def test_put_with_accumulate_adds_repeats_and_its_gradients_are_pytorchs():
    gw, pt = run_both("""
        x = torch.zeros(2, 3, dtype=torch.float64)
        x.put_(torch.tensor([0, 4, 0, -1]), torch.tensor([1., 2., 3., 4.], dtype=torch.float64), accumulate=True)
        a = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
        s = torch.randn(4, dtype=torch.float64, requires_grad=True)
        y = a.put(torch.tensor([0, 4, 0, 5]), s, accumulate=True)
        node = (type(y.grad_fn).__name__, y.grad_fn._saved_accumulate, y.grad_fn._saved_index.tolist(),
                sorted(n for n in dir(y.grad_fn) if n.startswith("_saved") or n.startswith("_raw_saved")))
        y.backward(torch.arange(6., dtype=torch.float64).reshape(2, 3))
        grads = (a.grad.clone(), s.grad.clone())
        b = a.clone()
        b.put_(torch.tensor([0, 0]), s[:2])
        b.sum().backward()
        overwrite = (a.grad, s.grad)
        checks = (torch.autograd.gradcheck(lambda a, s: a.put(torch.tensor([0, 4, 0, 5]), s, accumulate=True), (a, s)),
                  torch.autograd.gradgradcheck(lambda a, s: a.put(torch.tensor([1, 4]), s[:2]), (a, s)),
                  torch.autograd.gradcheck(lambda a: a.take(torch.tensor([[0, 5], [5, 1]])), (a,)))
    """)
    assert_same(gw["x"], pt["x"])
    assert gw["node"] == pt["node"]
    assert _graph(gw["b"]) == _graph(pt["b"])
    for a, b in zip(gw["grads"] + gw["overwrite"], pt["grads"] + pt["overwrite"], strict=True):
        assert_same(a, b)
    assert gw["checks"] == pt["checks"] == (True, True, True)


def test_index_put_accumulate_in_and_out_of_place_with_its_gradients():
    gw, pt = run_both("""
        z = torch.zeros(3, 2, dtype=torch.float64)
        z.index_put_((torch.tensor([0, 0, 2]),), torch.tensor([[1.], [2.], [3.]], dtype=torch.float64), accumulate=True)
        five = torch.tensor(5., dtype=torch.float64)
        z.index_put_((torch.tensor([0, 0]), torch.tensor([1, 1])), five, accumulate=True)
        masked = z.index_put((torch.tensor([True, False, True]),), torch.tensor([7., 8.], dtype=torch.float64), True)
        w = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
        v = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
        out = w.index_put((torch.tensor([0, 0, 2]),), v, accumulate=True)
        node = (out.grad_fn._saved_accumulate, [t.tolist() for t in out.grad_fn._saved_indices])
        out.backward(torch.arange(6., dtype=torch.float64).reshape(3, 2))
        grads = (w.grad.clone(), v.grad.clone())
        w2 = w.clone()
        w2.index_put_((torch.tensor([0, 0, 2]), torch.tensor([1, 1, 0])), v[0, 0], accumulate=True)
        w2.sum().backward()
        later = (w.grad, v.grad)
        check = torch.autograd.gradcheck(
            lambda w, v: w.index_put((torch.tensor([0, 0, 2]),), v, accumulate=True), (w, v))
    """)
    for name in ("z", "masked"):
        assert_same(gw[name], pt[name])
    assert gw["node"] == pt["node"]
    assert _graph(gw["out"]) == _graph(pt["out"]) and _graph(gw["w2"]) == _graph(pt["w2"])
    for a, b in zip(gw["grads"] + gw["later"], pt["grads"] + pt["later"], strict=True):
        assert_same(a, b)
    assert gw["check"] and pt["check"]


@pytest.mark.parametrize("snippet", [
    "torch.zeros(3).put_(torch.tensor([3]), torch.tensor([1.]), accumulate=True)",
    "torch.zeros(3).put_(torch.tensor([1, 2]), torch.tensor([1.]), accumulate=True)",
    "torch.zeros(3).put_(torch.tensor([1.]), torch.tensor([1.]))",
    "torch.zeros(3).put_(torch.tensor([1]), torch.tensor([1.], dtype=torch.float64))",
    "torch.zeros(3).index_put_((torch.tensor([3]),), torch.tensor(1.), accumulate=True)",
    "torch.zeros(3).index_put_((torch.tensor([1, 2]),), torch.tensor([1., 2., 3.]), accumulate=True)",
    "torch.zeros(3).index_put_(torch.tensor([0]), torch.tensor(1.))"])
def test_put_and_index_put_refuse_bad_arguments_as_pytorch_does(snippet):
    ours, theirs = raised_by("gradwalk", snippet), raised_by("torch", snippet)
    assert type(ours) is type(theirs) and message(ours) == message(theirs)


# ---------------------------------------------------------------- what indexing nodes save

def test_indexing_nodes_save_every_index_as_pytorch_does():
    gw, pt = run_both("""
        x = torch.randn(3, 4, 5, requires_grad=True)
        i0, i1 = torch.tensor([0, 2]), torch.tensor([1, 3])
        facts = []
        for y in (x[i0, i1], x[i0, :, i1], x[torch.tensor([True, False, True])], x[1, i1], x[[0, 1]],
                  x[None, i0], x[:, :, i1], x[..., i1], x[::2, i1]):
            n = y.grad_fn
            facts.append((type(n).__name__, type(n.next_functions[0][0]).__name__,
                          [None if t is None else t.tolist() for t in n._saved_indices], n._saved_self_sym_sizes,
                          len(n._raw_saved_indices),
                          sorted(a for a in dir(n) if a.startswith("_saved") or a.startswith("_raw_saved"))))
        z = x.clone()
        z[i0, i1] = torch.ones(2, 5)
        n = z.grad_fn
        facts.append((n._saved_accumulate, [t.tolist() for t in n._saved_indices],
                      sorted(a for a in dir(n) if a.startswith("_saved") or a.startswith("_raw_saved"))))
        z = x.clone()
        z[:, i1] = 2.
        facts.append([None if t is None else t.tolist() for t in z.grad_fn._saved_indices])
    """)
    assert gw["facts"] == pt["facts"]


def test_common_nodes_show_pytorchs_saved_fields():
    gw, pt = run_both("""
        x = torch.randn(3, 4, requires_grad=True)
        nodes = [x.sum(1), x.t().reshape(12), x.reshape(12), x.expand(2, 3, 4).reshape(2, 12), torch.cat([x, x]),
                 x.split(2)[0], x.sort(1)[0], x.topk(2)[0], x.double(), x @ x.t(), x.mean(0), x[0], x[1:]]
        facts = [(type(y.grad_fn).__name__,
                  sorted(a for a in dir(y.grad_fn) if a.startswith("_saved") or a.startswith("_raw_saved")))
                 for y in nodes]
        sizes = x.sum(1).grad_fn._saved_self_sym_sizes
    """)
    assert gw["facts"] == pt["facts"]
    assert type(gw["sizes"]) is type(pt["sizes"]) is tuple and gw["sizes"] == pt["sizes"]


# ---------------------------------------------------------------- IndexError texts

@pytest.mark.parametrize("index", [
    "torch.tensor([0, 5])", "torch.tensor([-4])", "(slice(None), torch.tensor([4]))",
    "(torch.tensor([0]), torch.tensor([9]))", "[0, 7]", "torch.tensor([0.])", "(slice(None), torch.tensor([1.5]))",
    "(torch.tensor([0]), torch.tensor([0]), torch.tensor([0]))", "(0, 0, 0)", "(0, slice(None), torch.tensor([0]))",
    "torch.tensor([True, False])", "torch.ones(3, 3, dtype=torch.bool)", "(slice(None), torch.tensor([True, False]))",
    "(torch.tensor([0, 1]), torch.tensor([0, 1, 2]))", "3", "(0, 4)", "1.0"])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_a_bad_index_raises_pytorchs_index_error(index, requires_grad):
    snippet = f"torch.zeros(3, 4, requires_grad={requires_grad})[{index}]"
    ours, theirs = raised_by("gradwalk", snippet), raised_by("torch", snippet)
    assert type(ours) is type(theirs) and message(ours) == message(theirs)


@pytest.mark.parametrize("index, value", [
    ("torch.tensor([5])", "1."), ("torch.tensor([1.])", "1."), ("torch.tensor([True])", "1."),
    ("torch.tensor([0, 1])", "torch.ones(3)"), ("(0, 0, torch.tensor([0]))", "1."), ("t > -1", "torch.ones(5)")])
@pytest.mark.parametrize("in_graph", [False, True])
def test_a_bad_index_assignment_raises_pytorchs_error(index, value, in_graph):
    make = "torch.zeros(3, 4, requires_grad=True).clone()" if in_graph else "torch.zeros(3, 4)"
    snippet = f"t = {make}\nt[{index}] = {value}"
    ours, theirs = raised_by("gradwalk", snippet), raised_by("torch", snippet)
    assert type(ours) is type(theirs) and message(ours) == message(theirs)


def test_a_list_of_float_numbers_indexes_as_longs():
    gw, pt = run_both("y = torch.arange(12.).reshape(3, 4)[[0., 2.]]")
    assert_same(gw["y"], pt["y"])


# ---------------------------------------------------------------- Tensor.grad_dtype

def test_grad_dtype_keeps_a_leafs_gradient_in_another_dtype():
    gw, pt = run_both("""
        x = torch.randn(3, requires_grad=True)
        default = x.grad_dtype
        x.grad_dtype = torch.float64
        (x * 2).sum().backward()
        first = (x.grad_dtype, x.grad)
        x.grad = None
        captured = torch.autograd.grad((x * 2).sum(), x)[0].dtype
        x.grad_dtype = None  # any dtype: .grad keeps whatever it is given
        x.grad = torch.ones(3, dtype=torch.float16)
        (x * 2).sum().backward()
        kept = x.grad
        x.grad = None
        (x * 2).sum().backward()
        fresh = x.grad.dtype
        w = torch.randn(3, requires_grad=True)
        y = w * 2  # the accumulator exists before grad_dtype is set
        w.grad_dtype = torch.float64
        y.sum().backward()
        late = w.grad
        others = (w.detach().grad_dtype, torch.nn.Parameter(torch.randn(2)).grad_dtype, torch.ones(2).grad_dtype)
    """)
    assert str(gw["default"]) == str(pt["default"]) and str(gw["first"][0]) == str(pt["first"][0])
    assert_same(gw["first"][1], pt["first"][1])
    assert str(gw["captured"]) == str(pt["captured"]) == "torch.float64"
    assert_same(gw["kept"], pt["kept"])
    assert_same(gw["late"], pt["late"])
    assert str(gw["fresh"]) == str(pt["fresh"]) and str(gw["others"]) == str(pt["others"])


@pytest.mark.parametrize("snippet", [
    "x = torch.randn(3, requires_grad=True)\n(x * 2).grad_dtype = torch.float64",
    "x = torch.randn(3, requires_grad=True)\n(x * 2).grad_dtype",
    "x = torch.randn(3, requires_grad=True)\nx.grad_dtype = 3",
    "x = torch.randn(3, requires_grad=True)\nx.grad_dtype = 'float'",
    "x = torch.randn(3, requires_grad=True)\nx.grad = torch.ones(3)\nx.grad_dtype = torch.float64",
    "x = torch.randn(3, requires_grad=True)\nx.grad_dtype = torch.float64\nx.grad = torch.ones(3)"])
def test_grad_dtype_refuses_what_pytorch_refuses(snippet):
    ours, theirs = raised_by("gradwalk", snippet), raised_by("torch", snippet)
    assert type(ours) is type(theirs) and message(ours) == message(theirs)


# ---------------------------------------------------------------- found by PyTorch's autograd test bodies

def test_var_mean_saves_only_its_input_so_its_outputs_may_change_in_place():
    gw, pt = run_both("""
        b = torch.arange(9.).reshape(3, 3).sin().requires_grad_()
        var, mean = torch.var_mean(b, dim=0)
        var.retain_grad()
        var.mul_(2)
        (var + mean).sum().backward()
        saved = sorted(a for a in dir(torch.var_mean(b, dim=0)[0].grad_fn) if a.startswith("_saved"))
        std_saved = sorted(a for a in dir(torch.std_mean(b, dim=0)[0].grad_fn) if a.startswith("_saved"))
    """)
    assert_same(gw["b"].grad, pt["b"].grad)
    assert_same(gw["var"].grad, pt["var"].grad)
    assert gw["saved"] == pt["saved"] and gw["std_saved"] == pt["std_saved"]


def test_delayed_error_and_undefined_grad_nodes():
    gw, pt = run_both("""
        y = torch.tensor([1., 2.], requires_grad=True)
        y_safe = torch._C._functions.DelayedError("Boom!", 1)(y)
        node = (type(y_safe.grad_fn).__name__, y_safe.grad_fn.name(), y_safe._version)
        out = y_safe * 2
        try:
            out.sum().backward()
        except RuntimeError as e:
            raised = str(e)
        g = torch.autograd.grad((y_safe * 3).sum(), y_safe)[0]
        u = torch._C._functions.UndefinedGrad()(y * 1)
        u_name = u.grad_fn.name()
        (u * 2).sum().backward()
        grad_after = y.grad
    """)
    assert gw["node"] == pt["node"] and gw["raised"] == pt["raised"] == "Boom!"
    assert_same(gw["g"], pt["g"])
    assert gw["u_name"] == pt["u_name"] and gw["grad_after"] is None and pt["grad_after"] is None


def test_small_apis_pytorchs_tests_reach_for():
    gw, pt = run_both("""
        import pickle, warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            @torch.no_grad()
            class Foo:
                def __init__(self):
                    self.grad_inside = torch.is_grad_enabled()

            inside = Foo().grad_inside
            volatile = torch.randn(2).volatile
        messages = [(w.category.__name__, str(w.message)[:40]) for w in caught]
        a = torch.rand(5, requires_grad=True)
        v = a._version
        torch.autograd.graph.increment_version(a)
        bumped = a._version - v
        same_module = torch.autograd.torch is torch
        x = torch.ones(2, 2, requires_grad=True)
        with torch.no_grad():
            arr = x.numpy().tolist()
        back = pickle.loads(pickle.dumps([x, x * 2, torch.zeros(3)]))
        restored = [(t.tolist(), t.requires_grad, t.grad_fn is None) for t in back]
        n = torch.nextafter(torch.tensor([1.0, 2.0], requires_grad=True), torch.tensor([2.0, 0.0]))
        n_name = type(n.grad_fn).__name__
        n_value = n.tolist()
        vmap_default = torch.autograd.Function.generate_vmap_rule
        try:
            torch.autograd.Function.vmap(None, None)
        except NotImplementedError as e:
            vmap_error = str(e)
    """)
    for key in ("inside", "volatile", "messages", "bumped", "same_module", "arr", "restored",
                "n_name", "n_value", "vmap_default", "vmap_error"):
        assert gw[key] == pt[key], key


def test_saved_variables_warns_as_deprecated():
    gw, pt = run_both("""
        import warnings

        class MyFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a * 2

            @staticmethod
            def backward(ctx, g):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    (a,) = ctx.saved_variables
                found.extend((w.category.__name__, str(w.message)) for w in caught)
                return g * 2

        found = []
        MyFunction.apply(torch.ones(2, requires_grad=True)).sum().backward()
    """)
    assert gw["found"] == pt["found"]


def test_saved_tensor_hooks_entered_during_backward_do_not_outlive_it():
    gw, pt = run_both("""
        def unpack(t):
            late.__enter__()  # pushed while the engine runs: dropped when backward ends
            return t

        late = torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t)
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            x = torch.arange(3.).requires_grad_()
            y = x.sin().sum()
        y.backward()
        z = torch.tensor(1.0, requires_grad=True).exp()
        z.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)  # no default hooks left
    """)
    assert_same(gw["x"].grad, pt["x"].grad)


def test_a_saved_tensor_takes_one_pair_of_hooks():
    snippet = """
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            z = torch.tensor(1.0, requires_grad=True).exp()
        z.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)
    """
    ours, theirs = raised_by("gradwalk", snippet), raised_by("torch", snippet)
    assert type(ours) is type(theirs) and message(ours) == message(theirs)
    snippet = """
        z = torch.tensor(1.0, requires_grad=True).exp()
        z.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)
        z.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)
    """
    ours, theirs = raised_by("gradwalk", snippet), raised_by("torch", snippet)
    assert type(ours) is type(theirs) and message(ours) == message(theirs)


def test_deepcopy_of_a_tensor_keeps_its_grad_and_refuses_non_leaves():
    gw, pt = run_both("""
        import copy
        x = torch.tensor([1., 2.], requires_grad=True)
        (x * 2).sum().backward()
        y = copy.deepcopy(x)
        facts = (y.tolist(), y.requires_grad, y.grad.tolist(), y.is_leaf, y.grad is not x.grad,
                 copy.copy(x).grad, type(copy.deepcopy(torch.nn.Linear(2, 2)).weight).__name__)
    """)
    assert gw["facts"] == pt["facts"]
    snippet = "import copy\ncopy.deepcopy(torch.ones(2, requires_grad=True) * 2)"
    ours, theirs = raised_by("gradwalk", snippet), raised_by("torch", snippet)
    assert type(ours) is type(theirs) and message(ours) == message(theirs)


def test_one_element_of_an_expanded_tensor_can_be_written():
    gw, pt = run_both("""
        g = torch.ones(1).clone().expand(4)
        g[0] = 0
        g[0] /= 0
        shared = g.tolist()
    """)
    assert str(gw["shared"]) == str(pt["shared"])
    snippet = "torch.ones(1).expand(3).add_(1)"
    ours, theirs = raised_by("gradwalk", snippet), raised_by("torch", snippet)
    assert type(ours) is type(theirs) and message(ours) == message(theirs)


def test_anomaly_warning_printed_when_warnings_are_errors(capsys):
    for library in ("gradwalk", "torch"):
        snippet = """
            import warnings
            with torch.autograd.detect_anomaly():
                warnings.simplefilter("error")
                a = torch.tensor([1., 2.], requires_grad=True)
                d1 = a + 1
                d2 = d1 ** 2
                d1 += 1
                torch.autograd.grad(d2.sum(), a)
        """
        import warnings

        with warnings.catch_warnings():
            error = raised_by(library, snippet)
        assert isinstance(error, RuntimeError) and "modified by an inplace operation" in str(error)
        assert "Error detected in PowBackward0" in capsys.readouterr().err, library


def test_the_autograd_profilers_event_api():
    gw, pt = run_both("""
        from torch.autograd.profiler_util import EventList, FunctionEvent, FunctionEventAvg, _format_time
        from torch.autograd import kineto_available
        avg = FunctionEventAvg()
        avg.add(FunctionEvent(id=0, node_id=0, name="foo", thread=0, start_us=10, end_us=15))
        avg.add(FunctionEvent(id=1, node_id=0, name="foo", thread=0, start_us=20, end_us=30))
        avg.add(avg)
        stats = (avg.key, avg.count, avg.cpu_time_total, avg.self_cpu_time_total, avg.cpu_time,
                 avg.device_time_total)
        events = EventList()
        for i, (thread, start, end) in enumerate([(1, 0, 1), (1, 1, 2), (0, 0, 2), (0, 1, 2), (0, 1, 3)]):
            events.append(FunctionEvent(id=i + 1, node_id=0, name="", thread=thread, start_us=start, end_us=end))
        events._populate_cpu_children()
        children = [[c.id for c in e.cpu_children] for e in events]
        times = [_format_time(t) for t in (12.5, 1500.0, 2.5e6)]
        on = kineto_available()
        with torch.autograd.profiler.profile(use_kineto=on, record_shapes=True) as prof:
            inside = torch.autograd._profiler_enabled()
            torch.nn.Linear(3, 2)(torch.ones(4, 3))
        after = torch.autograd._profiler_enabled()
        linear = [e.input_shapes for e in prof.function_events if e.name == "aten::linear"]
        same_text = str(prof) == prof.table()
        shapes = torch.autograd._calculate_shape(torch.ones(10, 5), torch.ones(3, 10, 5), True)
    """)
    for key in ("stats", "children", "times", "on", "inside", "after", "linear", "same_text"):
        assert gw[key] == pt[key], key
    assert [tuple(s) for s in gw["shapes"]] == [tuple(s) for s in pt["shapes"]]


def test_out_refused_when_the_out_tensor_requires_grad():
    snippet = "torch.mul(torch.ones(2), torch.ones(2), out=torch.zeros(2, requires_grad=True))"
    ours, theirs = raised_by("gradwalk", snippet), raised_by("torch", snippet)
    assert type(ours) is type(theirs) and message(ours) == message(theirs)


def test_resize_in_place():
    gw, pt = run_both("""
        x = torch.arange(12.).reshape(3, 4)
        shapes = [tuple(x.resize_(2, 2).shape), x.tolist(), tuple(x.resize_([3, 2]).shape), x[:2].tolist()]
    """)
    assert gw["shapes"] == pt["shapes"]
    snippet = "torch.ones(3, requires_grad=True).resize_(2)"
    ours, theirs = raised_by("gradwalk", snippet), raised_by("torch", snippet)
    assert type(ours) is type(theirs) and message(ours) == message(theirs)


def test_inplace_activations_threshold_and_instance_norm():
    gw, pt = run_both("""
        root = torch.tensor([[-1., 2.], [3., -4.]], requires_grad=True)
        view = root.clone().view(4)
        out = F.relu(view, inplace=True)
        relu_facts = (out is view, type(view.grad_fn).__name__)
        leaky = torch.tensor([-1., 2.])
        F.leaky_relu(leaky, 0.1, inplace=True)
        x = torch.tensor([-1., 0.5, 2., 0.6], requires_grad=True)
        y = F.threshold(x, 0.6, -3.)
        g, = torch.autograd.grad((y * y).sum(), x, create_graph=True)
        gg, = torch.autograd.grad(g.sum(), x)
        thr = (y.tolist(), type(y.grad_fn).__name__, y.grad_fn._saved_threshold, g.tolist(),
               type(g.grad_fn).__name__, gg.tolist())
        z = x.clone()
        F.threshold(z, 0., 0., True)
        thr_ = (z.tolist(), type(z.grad_fn).__name__)
        seq = torch.arange(24.).reshape(2, 3, 4)
        inp = seq.sin().requires_grad_()
        norm = torch.nn.InstanceNorm1d(3, affine=True, track_running_stats=True)
        normed = norm(inp)
        (normed * seq).sum().backward()
        image = torch.arange(36.).reshape(2, 2, 3, 3).cos().requires_grad_()
        normed2 = torch.nn.InstanceNorm2d(2)(image)
        g2, = torch.autograd.grad((normed2 ** 2).sum() + normed2[0, 0, 0, 0], image, create_graph=True)
        text = repr(norm)
    """)
    assert gw["relu_facts"] == pt["relu_facts"]
    assert_same(gw["leaky"], pt["leaky"])
    assert str(gw["thr"]) == str(pt["thr"]) and str(gw["thr_"]) == str(pt["thr_"])
    for name in ("normed", "normed2", "g2"):
        assert_same(gw[name], pt[name], atol=1e-5)
    for a, b in ((gw["inp"].grad, pt["inp"].grad), (gw["norm"].weight.grad, pt["norm"].weight.grad),
                 (gw["norm"].running_mean, pt["norm"].running_mean), (gw["norm"].running_var, pt["norm"].running_var)):
        assert_same(a, b, atol=1e-5)
    assert gw["text"] == pt["text"]


def test_igamma_and_igammac_with_their_gradient_in_x():
    gw, pt = run_both("""
        a = torch.tensor([0.5, 1., 2., 3., 10., 0., 2.5], dtype=torch.float64)
        x = torch.tensor([0.3, 1., 0.5, 7., 9., 1., 0.], dtype=torch.float64, requires_grad=True)
        lower, upper = torch.igamma(a, x), torch.igammac(a, x)
        g, = torch.autograd.grad(lower.sum() + 2 * upper.sum(), x)
        node = type(lower.grad_fn).__name__
        check = torch.autograd.gradcheck(lambda x: torch.igamma(a[:5], x), (x.detach()[:5].clone().requires_grad_(),))
    """)
    for name in ("lower", "upper", "g"):
        assert_same(gw[name], pt[name], rtol=1e-10)
    assert gw["node"] == pt["node"] and gw["check"] and pt["check"]
    snippet = """
        a = torch.tensor([1., 2.], requires_grad=True)
        torch.igamma(a, torch.tensor([1., 2.])).sum().backward()
    """
    ours, theirs = raised_by("gradwalk", snippet), raised_by("torch", snippet)
    assert type(ours) is type(theirs) and message(ours) == message(theirs)
    snippet = """
        fwAD = torch.autograd.forward_ad
        with fwAD.dual_level():
            d = fwAD.make_dual(torch.ones(3), torch.ones(3))
            torch.igamma(d, d)
    """
    ours, theirs = raised_by("gradwalk", snippet), raised_by("torch", snippet)
    assert type(ours) is type(theirs) is NotImplementedError
    assert message(ours).startswith("Trying to use forward AD with")
