"""Gaps found by running PyTorch's own test/test_autograd.py bodies (session 5, part b), each
checked beside real PyTorch: torch._C._current_autograd_node, sum/mean(dim=None), the profiler's
randn events, and the recurrent layers (nn.RNN/LSTM/GRU and their cells)."""
import numpy as np
import pytest
import torch

import gradwalk


# --- torch._C._current_autograd_node ---------------------------------------------------------

def _nodes_seen_by_hooks(lib):
    """The node names a tensor hook and a custom backward see, and what is seen outside."""
    seen = []

    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            seen.append(lib._C._current_autograd_node().name())
            return g * 2

    a = lib.ones(3, requires_grad=True)
    b = Double.apply(a)
    c = b.exp()
    c.register_hook(lambda g: seen.append(lib._C._current_autograd_node().name()))
    before = lib._C._current_autograd_node()
    c.sum().backward()
    return before, seen, lib._C._current_autograd_node()


def test_current_autograd_node_is_the_running_node():
    before, seen, after = _nodes_seen_by_hooks(gradwalk)
    t_before, t_seen, t_after = _nodes_seen_by_hooks(torch)
    assert before is None and after is None
    assert t_before is None and t_after is None
    assert seen == t_seen == ["ExpBackward0", "DoubleBackward"]


def _post_hook_registered_in_unpack(lib):
    """PyTorch's test_node_post_hook_registered_during_unpack_hook: an unpack hook registers a
    post hook on the running node; it runs, and sees no inputs (PyTorch moved them)."""
    inputs_seen = []

    def unpack(t):
        node = lib._C._current_autograd_node()

        def hook(grad_inputs, grad_outputs):
            inputs_seen.append(all(g is None for g in grad_outputs))
            return tuple(g / 2.0 if g is not None else None for g in grad_inputs)

        node.register_hook(hook)
        return t

    a = lib.tensor([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        var, mean = lib.var_mean(a, dim=0)
        (var + mean).sum().backward()
    return a.grad.numpy(), inputs_seen


def test_post_hook_registered_by_unpack_hook_runs():
    grad, inputs_seen = _post_hook_registered_in_unpack(gradwalk)
    t_grad, t_inputs_seen = _post_hook_registered_in_unpack(torch)
    np.testing.assert_array_equal(grad, t_grad)
    assert inputs_seen == t_inputs_seen and inputs_seen and all(inputs_seen)


# --- sum/mean(dim=None) are the dim overloads -------------------------------------------------

@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin", "std", "var"])
@pytest.mark.parametrize("kwargs", [{}, {"dim": None}, {"dim": None, "keepdim": True}])
def test_reductions_with_dim_none_make_pytorchs_node(name, kwargs):
    data = np.arange(6.0).reshape(2, 3)
    x = gradwalk.tensor(data, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    out, t_out = getattr(x, name)(**kwargs), getattr(tx, name)(**kwargs)
    assert out.grad_fn.name() == t_out.grad_fn.name()
    assert tuple(out.shape) == tuple(t_out.shape)
    np.testing.assert_array_equal(out.detach().numpy(), t_out.detach().numpy())
    out.sum().backward()
    t_out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_sum_dim_none_is_sumbackward1_and_sum_is_sumbackward0():
    x = gradwalk.ones(2, 3, requires_grad=True)
    assert type(x.sum().grad_fn).__name__ == "SumBackward0"
    assert type(x.sum(dim=None).grad_fn).__name__ == "SumBackward1"
    assert type(gradwalk.sum(x, None).grad_fn).__name__ == "SumBackward1"
    assert type(x.mean(None).grad_fn).__name__ == "MeanBackward1"


# --- the profiler's events for randn ----------------------------------------------------------

def _profiled_events(lib, profile):
    with profile() as p:
        x = lib.randn(4, 4, requires_grad=True)
        x.sum(dim=None).backward()
    names = ("aten::randn", "aten::normal_", "aten::sum", "autograd::engine::evaluate_function: SumBackward1")
    return [(e.name, [c.name for c in e.cpu_children]) for e in p.function_events if e.name in names], \
        [e.sequence_nr for e in p.function_events if e.name in names[2:]]


def test_profiler_records_randn_as_empty_then_normal():
    from gradwalk.autograd.profiler import profile
    from torch.autograd.profiler import profile as t_profile

    events, seqs = _profiled_events(gradwalk, profile)
    t_events, t_seqs = _profiled_events(torch, t_profile)
    assert [e[0] for e in events] == [e[0] for e in t_events] == [
        "aten::randn", "aten::normal_", "aten::sum", "autograd::engine::evaluate_function: SumBackward1"]
    assert events[0] == t_events[0] == ("aten::randn", ["aten::empty", "aten::normal_"])
    assert seqs[0] == seqs[1] >= 0 and t_seqs[0] == t_seqs[1] >= 0


# --- nn.RNN, nn.LSTM, nn.GRU and the cells ---------------------------------------------------

RNN_CASES = [
    ("LSTM", {}), ("GRU", {}), ("RNN", {}), ("RNN", {"nonlinearity": "relu"}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("GRU", {"num_layers": 3, "bidirectional": True, "bias": False}),
    ("LSTM", {"num_layers": 2, "proj_size": 2}),
    ("LSTM", {"num_layers": 2, "dropout": 0.3}),
    ("RNN", {"num_layers": 2, "batch_first": True}),
]


def _rnn_run(lib, cls, kwargs, dtype, with_h0, training):
    """Build after manual_seed, run on a (batch 2, 4 steps, 3 features) input, backward."""
    lib.manual_seed(0)
    layer = getattr(lib.nn, cls)(3, 5, dtype=getattr(lib, dtype), **kwargs)
    layer.train(training)
    lib.manual_seed(1)
    shape = (2, 4, 3) if layer.batch_first else (4, 2, 3)
    x = lib.randn(*shape, dtype=getattr(lib, dtype), requires_grad=True)
    args = [x]
    if with_h0:
        n = layer.num_layers * (2 if layer.bidirectional else 1)
        h0 = lib.randn(n, 2, layer.proj_size or 5, dtype=getattr(lib, dtype))
        args.append((h0, lib.randn(n, 2, 5, dtype=getattr(lib, dtype))) if cls == "LSTM" else h0)
    out, hidden = layer(*args)
    hidden = hidden if isinstance(hidden, tuple) else (hidden,)
    (out.pow(2).sum() + sum(h.sum() for h in hidden)).backward()
    return {
        "names": [name for name, _ in layer.named_parameters()],
        "flat": list(layer._flat_weights_names),
        "init": [p.detach().numpy().copy() for p in layer.parameters()],
        "repr": repr(layer),
        "shapes": [tuple(out.shape)] + [tuple(h.shape) for h in hidden],
        "values": [out.detach().numpy()] + [h.detach().numpy() for h in hidden],
        "grads": [x.grad.numpy()] + [p.grad.numpy() for p in layer.parameters()],
    }


@pytest.mark.parametrize("cls,kwargs", RNN_CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("with_h0,training", [(False, False), (True, True)])
def test_recurrent_layer_matches_torch(cls, kwargs, dtype, with_h0, training):
    mine = _rnn_run(gradwalk, cls, kwargs, dtype, with_h0, training)
    theirs = _rnn_run(torch, cls, kwargs, dtype, with_h0, training)
    assert mine["names"] == theirs["names"] == mine["flat"] == theirs["flat"]
    assert mine["repr"] == theirs["repr"]
    for a, b in zip(mine["init"], theirs["init"]):  # the same draws from the same seed
        np.testing.assert_array_equal(a, b)
    assert mine["shapes"] == theirs["shapes"]
    # float64: the same ops in the same order (BLAS may round a last bit differently); float32:
    # PyTorch's CPU LSTM runs through oneDNN, so last bits differ
    tol = {"float64": dict(rtol=1e-12, atol=1e-14), "float32": dict(rtol=1e-5, atol=1e-6)}[dtype]
    for a, b in zip(mine["values"] + mine["grads"], theirs["values"] + theirs["grads"]):
        np.testing.assert_allclose(a, b, **tol)


def test_recurrent_layer_parameters_are_pytorchs():
    layer = gradwalk.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    t_layer = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    assert [n for n, _ in layer.named_parameters()][:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0",
                                                            "bias_hh_l0", "weight_ih_l0_reverse"]
    assert [tuple(p.shape) for p in layer._flat_weights] == [tuple(p.shape) for p in t_layer._flat_weights]
    assert [[tuple(w.shape) for w in ws] for ws in layer.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in t_layer.all_weights]
    assert layer._flat_weights[0] is layer.weight_ih_l0
    new = gradwalk.nn.Parameter(gradwalk.zeros(16, 3))
    layer.weight_ih_l0 = new  # assigning a weight updates _flat_weights, as in PyTorch
    assert layer._flat_weights[0] is new
    assert sorted(layer.state_dict()) == sorted(t_layer.state_dict())


def test_unbatched_input_and_batch_first():
    for lib in (gradwalk, torch):
        lib.manual_seed(0)
        gru = lib.nn.GRU(3, 5, batch_first=True)
        out, h = gru(lib.randn(4, 3), lib.zeros(1, 5))
        assert tuple(out.shape) == (4, 5) and tuple(h.shape) == (1, 5)
        lstm = lib.nn.LSTM(3, 5, batch_first=True)
        out, (h, c) = lstm(lib.randn(2, 7, 3))
        assert tuple(out.shape) == (2, 7, 5) and tuple(h.shape) == tuple(c.shape) == (1, 2, 5)


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("case", ["input_size", "hidden", "dims", "proj_on_gru", "dtype", "lstm_hx_dims",
                                  "cell_dims", "nonlinearity"])
def test_recurrent_layer_errors_are_pytorchs(case):
    def make(lib):
        def run():
            if case == "input_size":
                lib.nn.LSTM(3, 5)(lib.randn(4, 2, 6))
            elif case == "hidden":
                lib.nn.GRU(3, 5)(lib.randn(4, 2, 3), lib.randn(1, 3, 5))
            elif case == "dims":
                lib.nn.RNN(3, 5)(lib.randn(4, 2, 3, 1))
            elif case == "proj_on_gru":
                lib.nn.GRU(3, 5, proj_size=2)
            elif case == "dtype":
                lib.nn.RNN(3, 5)(lib.randn(4, 2, 3, dtype=lib.float64))
            elif case == "lstm_hx_dims":
                lib.nn.LSTM(3, 5)(lib.randn(4, 2, 3), (lib.randn(1, 2, 5), lib.randn(2, 5)))
            elif case == "cell_dims":
                lib.nn.LSTMCell(3, 5)(lib.randn(4, 2, 3))
            elif case == "nonlinearity":
                lib.nn.RNN(3, 5, nonlinearity="sigmoid")
        return run

    mine, theirs = _error(make(gradwalk)), _error(make(torch))
    assert mine[0] is theirs[0]
    assert mine[1].replace("gradwalk.", "torch.") == theirs[1]


def test_packed_sequence_is_refused_by_name():
    class PackedSequence(tuple):  # what torch.nn.utils.rnn.pack_padded_sequence returns
        pass

    with pytest.raises(NotImplementedError, match="PackedSequence"):
        gradwalk.nn.LSTM(3, 5)(PackedSequence((gradwalk.randn(4, 3), gradwalk.tensor([2, 2]))))


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("batched", [True, False])
def test_cells_match_torch(cls, dtype, batched):
    def run(lib):
        lib.manual_seed(0)
        cell = getattr(lib.nn, cls)(3, 4, dtype=getattr(lib, dtype))
        lib.manual_seed(1)
        x = lib.randn(*((2, 3) if batched else (3,)), dtype=getattr(lib, dtype), requires_grad=True)
        h = x
        outs = []
        state = None
        for _ in range(3):  # a few steps, the state fed back
            state = cell(h, state)
            out = state[0] if cls == "LSTMCell" else state
            outs.append(out)
            h = x
        sum(o.sum() for o in outs).backward()
        return ([p.detach().numpy().copy() for p in cell.parameters()], repr(cell),
                [o.detach().numpy() for o in outs] + [x.grad.numpy()] + [p.grad.numpy() for p in cell.parameters()])

    (init, rep, vals), (t_init, t_rep, t_vals) = run(gradwalk), run(torch)
    assert rep == t_rep
    for a, b in zip(init, t_init):
        np.testing.assert_array_equal(a, b)
    tol = {"float64": dict(rtol=1e-12, atol=1e-14), "float32": dict(rtol=1e-5, atol=1e-6)}[dtype]
    for a, b in zip(vals, t_vals):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, **tol)


def test_rnn_cell_relu_and_no_bias_repr():
    for lib in (gradwalk, torch):
        assert repr(lib.nn.RNNCell(3, 4, bias=False, nonlinearity="relu")) == \
            "RNNCell(3, 4, bias=False, nonlinearity=relu)"
        assert repr(lib.nn.LSTM(3, 4, 2, batch_first=True, dropout=0.5)) == \
            "LSTM(3, 4, num_layers=2, batch_first=True, dropout=0.5)"


# --- CopySlices with create_graph: PyTorch's graph ------------------------------------------

def _gradient_penalty(lib):
    """PyTorch's test_inplace_on_view_backward: grad through threshold_ on a view_as."""
    inputs = lib.ones((1, 3, 4, 4), requires_grad=True)
    tmp1 = (inputs + 1).view_as(inputs)
    tmp2 = lib.nn.functional.threshold(tmp1, 0.0, 0.0, True)
    prob = lib.sigmoid(tmp2)
    (gradients,) = lib.autograd.grad(outputs=prob, inputs=inputs, grad_outputs=lib.ones(prob.size()),
                                     create_graph=True, retain_graph=True)
    penalty = gradients.sum()
    penalty.backward()
    copy_slices = penalty.grad_fn.next_functions[0][0]
    return (copy_slices.name(), copy_slices.next_functions[1][0].name(), gradients.detach().numpy(),
            inputs.grad.numpy())


def test_copy_slices_double_backward_builds_pytorchs_graph():
    name, formula, grads, second = _gradient_penalty(gradwalk)
    t_name, t_formula, t_grads, t_second = _gradient_penalty(torch)
    assert name == t_name == "torch::autograd::CopySlices"
    assert formula == t_formula == "ThresholdBackwardBackward0"
    np.testing.assert_allclose(grads, t_grads, rtol=1e-6)
    np.testing.assert_allclose(second, t_second, rtol=1e-6, atol=1e-7)


def test_copy_slices_double_backward_values_on_a_slice():
    def run(lib):
        x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=lib.float64, requires_grad=True)
        y = x * 1
        y[:, 1:].mul_(y[:, :2].exp())
        (g,) = lib.autograd.grad(y.pow(3).sum(), x, create_graph=True)
        g.pow(2).sum().backward()
        return g.detach().numpy(), x.grad.numpy()

    for a, b in zip(run(gradwalk), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_sum_dim_none_saves_none_and_vmaps():
    from gradwalk.func import vmap

    x = gradwalk.arange(24.0).reshape(4, 2, 3).requires_grad_()
    tx = torch.arange(24.0).reshape(4, 2, 3).requires_grad_()
    for name in ("sum", "mean"):
        assert getattr(x, name)(dim=None).grad_fn._saved_dim is None
        assert getattr(tx, name)(dim=None).grad_fn._saved_dim is None
        assert getattr(x, name)(dim=(0, 1)).grad_fn._saved_dim == getattr(tx, name)(dim=(0, 1)).grad_fn._saved_dim
        mine = vmap(lambda t: getattr(t, name)(dim=None, keepdim=True))(x.detach())
        theirs = torch.vmap(lambda t: getattr(t, name)(dim=None, keepdim=True))(tx.detach())
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


@pytest.mark.parametrize("batch_first,side", [(False, "right"), (True, "right"), (True, "left")])
def test_pad_sequence_matches_torch(batch_first, side):
    seqs = [np.arange(6.0).reshape(3, 2), np.arange(2.0).reshape(1, 2) + 10, np.ones((2, 2))]

    def run(lib):
        tensors = [lib.tensor(s, requires_grad=True) for s in seqs]
        out = lib.nn.utils.rnn.pad_sequence(tensors, batch_first=batch_first, padding_value=-1.0,
                                            padding_side=side)
        (out * lib.arange(float(out.numel())).reshape(out.shape)).sum().backward()
        return out.detach().numpy(), [t.grad.numpy() for t in tensors]

    (out, grads), (t_out, t_grads) = run(gradwalk), run(torch)
    np.testing.assert_array_equal(out, t_out)
    for a, b in zip(grads, t_grads):
        np.testing.assert_array_equal(a, b)


def test_packing_raises_naming_packed_sequence():
    with pytest.raises(NotImplementedError, match="PackedSequence"):
        gradwalk.nn.utils.rnn.pack_padded_sequence(gradwalk.ones(3, 2, 1), [3, 2])


def _function_instance_accessors(lib):
    """A Function *instance* (deprecated) answers node accessors as a bare node, as in PyTorch."""
    import warnings

    class Id(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        f = Id()
    t = lib.ones(1, requires_grad=True)
    t._backward_hooks = {}  # (PyTorch crashes reading a tensor's hook dict that is None)
    before = (t * 2).grad_fn._sequence_nr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        g = Id()
    after = (t * 2).grad_fn._sequence_nr()
    return [f._sequence_nr() < before, g._sequence_nr() - before, after - before,
            f._register_hook_dict(t), type(f.register_hook(lambda gi, go: None)).__name__,
            type(f.register_prehook(lambda g: None)).__name__, f.next_functions, f.name(), f.metadata,
            f._input_metadata, hasattr(f, "no_such_attribute")]


def test_function_instance_is_a_bare_node():
    assert _function_instance_accessors(gradwalk) == _function_instance_accessors(torch)


# --- slogdet, inverse, chain_matmul -----------------------------------------------------------

SQUARE = np.array([[0.6, -1.2, 0.3], [2.0, 0.1, -0.7], [0.4, 0.9, 1.5]])


@pytest.mark.parametrize("batched", [False, True])
def test_slogdet_values_nodes_and_gradients_match_torch(batched):
    data = np.stack([SQUARE, -SQUARE.T]) if batched else SQUARE

    def run(lib):
        A = lib.tensor(data, requires_grad=True)
        sign, logabsdet = A.slogdet()
        named = lib.linalg.slogdet(A)
        (g,) = lib.autograd.grad((sign * logabsdet).sum(), A, create_graph=True)
        g.pow(2).sum().backward()
        return (type(named).__name__, repr(named).splitlines()[0], sign.requires_grad, sign.grad_fn.name(),
                sign.detach().numpy(), logabsdet.detach().numpy(), g.detach().numpy(), A.grad.numpy())

    mine, theirs = run(gradwalk), run(torch)
    assert mine[:4] == theirs[:4]
    for a, b in zip(mine[4:], theirs[4:]):
        np.testing.assert_allclose(a, b, rtol=1e-10)


def test_inverse_and_chain_matmul_match_torch():
    def run(lib):
        A = lib.tensor(SQUARE, requires_grad=True)
        inv = lib.inverse(A)
        prod = lib.chain_matmul(A, inv, A)
        (g,) = lib.autograd.grad(inv.sum() + prod.sum(), A, create_graph=True)
        g.sum().backward()
        return inv.grad_fn.name(), lib.linalg.inv(A).detach().numpy(), prod.detach().numpy(), g.detach().numpy(), \
            A.grad.numpy()

    mine, theirs = run(gradwalk), run(torch)
    assert mine[0] == theirs[0] == "LinalgInvExBackward0"
    for a, b in zip(mine[1:], theirs[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_slogdet_and_inv_refuse_non_square():
    for fn in ("slogdet", "inv"):
        mine, theirs = (_error(lambda lib=lib: getattr(lib.linalg, fn)(lib.ones(2, 3, dtype=lib.float64)))
                        for lib in (gradwalk, torch))
        assert mine == theirs
