"""What a fourth corpus of real scripts needed (PyTorch's NLP tutorials and its old "with examples"
scripts, the lecture series' batch-norm and WaveNet follow-along scripts and its GPT lecture code,
pytorch/examples' VAE, forward-forward and time-sequence scripts, the pruning tutorial, small
autograd snippets): each pattern a script used, written as our own snippet and run under gradwalk
and under PyTorch.
"""
import warnings

import numpy as np
import pytest
import torch  # noqa: F401  (real PyTorch: these tests fail without it)
import torch.nn.utils.prune  # noqa: F401  (PyTorch does not import it with torch.nn)

import gradwalk
from parity import (assert_same, assert_same_error, assert_same_output, message, raised_by, run_both,
                    run_in)


def caught_warnings(library, snippet):
    """The texts of the warnings ``snippet`` raises under ``library``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_in(library, snippet)
    return [str(w.message) for w in caught]


# ---------------------------------------------------------------- the pre-0.4 loss arguments

def test_size_average_false_sums_as_the_old_tutorials_expect():
    # two_layer_net_module.py: criterion = torch.nn.MSELoss(size_average=False)
    snippet = """
        torch.manual_seed(0)
        x, y = torch.randn(4, 3), torch.randn(4, 3)
        summed = torch.nn.MSELoss(size_average=False)(x, y)
        none = torch.nn.L1Loss(reduce=False)(x, y)
        mean = torch.nn.NLLLoss(size_average=True)(x.log_softmax(1), torch.tensor([0, 1, 2, 0]))
        functional = F.mse_loss(x, y, size_average=False)
        bce = F.binary_cross_entropy(x.sigmoid(), y.sigmoid(), reduce=False)
        reduction = torch.nn.CrossEntropyLoss(size_average=False, reduce=True).reduction
    """
    ours, theirs = run_both(snippet)
    for name in ("summed", "none", "mean", "functional", "bce"):
        assert_same(ours[name], theirs[name])
    assert ours["reduction"] == theirs["reduction"] == "sum"


def test_the_deprecation_warning_names_the_reduction_meant():
    snippet = "torch.nn.MSELoss(size_average=False); F.l1_loss(torch.ones(2), torch.zeros(2), reduce=False)"
    assert caught_warnings("gradwalk", snippet) == caught_warnings("torch", snippet) == [
        "size_average and reduce args will be deprecated, please use reduction='sum' instead.",
        "size_average and reduce args will be deprecated, please use reduction='none' instead."]


def test_log_softmax_without_dim_warns_and_picks_pytorchs_dim():
    # char_rnn_generation: self.softmax = nn.LogSoftmax(); sequence_models: F.log_softmax(tag_space)
    snippet = """
        torch.manual_seed(0)
        two_d = torch.nn.LogSoftmax()(torch.randn(2, 3))
        three_d = F.softmax(torch.randn(2, 3, 4))
        one_d = F.log_softmax(torch.randn(5))
    """
    ours, theirs = run_both(snippet)
    for name in ("two_d", "three_d", "one_d"):
        assert_same(ours[name], theirs[name])
    assert caught_warnings("gradwalk", snippet) == caught_warnings("torch", snippet)
    assert len(caught_warnings("torch", snippet)) == 3


def test_softmax_takes_stacklevel_before_dtype():
    snippet = "out = F.softmax(torch.tensor([1., 2.]), 0, 3, torch.float64)"
    ours, theirs = run_both(snippet)
    assert_same(ours["out"], theirs["out"])


# ---------------------------------------------------------------- 0-d tensors refuse indexes

def test_loss_data_zero_fails_as_in_pytorch():
    # print(t, loss.data[0]): PyTorch 0.3's way to read a loss; since 0.4 loss is 0-d
    assert_same_error("""
        loss = (torch.ones(3, requires_grad=True) * 2).sum()
        loss.data[0]
    """)


@pytest.mark.parametrize("index", ["0", ":", "[0]", "torch.tensor([0])", "0, None", "None, 0",
                                   "..., 0", "torch.tensor(0)"])
def test_zero_dim_getitem_errors(index):
    assert_same_error(f"torch.tensor(2.5)[{index}]")


@pytest.mark.parametrize("index", ["0", ":", "[0]", "0, None"])
def test_zero_dim_setitem_errors(index):
    assert_same_error(f"s = torch.tensor(2.5); s[{index}] = 1.")


def test_zero_dim_tensor_still_takes_none_ellipsis_and_true():
    snippet = "s = torch.tensor(2.5); a, b, c = s[None], s[...], s[True]; s[...] = 1.; d = s"
    ours, theirs = run_both(snippet)
    for name in "abcd":
        assert_same(ours[name], theirs[name])


def test_indexing_a_row_then_an_element_of_it():
    assert_same_error("v = torch.tensor([1., 2.]); v[0][0]")


@pytest.mark.parametrize("index", ["True", "False", "True, 0", "0, True", "None, True", "False, ..."])
def test_a_python_bool_index_is_a_new_dim_indexed_by_a_tensor(index):
    # x[False] has no rows (it used to read as x[0]); x[True] is a copy, not a view
    snippet = f"""
        x = torch.arange(6.).reshape(2, 3).requires_grad_()
        y = x[{index}]
        chain = [type(y.grad_fn).__name__, type(y.grad_fn.next_functions[0][0]).__name__]
        is_view = y._base is not None
        y.sum().backward()
    """
    ours, theirs = run_both(snippet)
    assert_same(ours["y"], theirs["y"])
    assert_same(ours["x"].grad, theirs["x"].grad)
    assert ours["chain"] == theirs["chain"]
    assert ours["is_view"] == theirs["is_view"] is False


# ---------------------------------------------------------------- cat, squeeze

@pytest.mark.parametrize("tensors", ["torch.tensor(1.), torch.tensor(2.)",
                                     "torch.tensor([1.]), torch.tensor(2.)"])
def test_cat_of_zero_dim_tensors_names_the_position(tensors):
    # the Bi-LSTM CRF tutorial: torch.cat(viterbivars_t) of next_tag_var[0][best_tag_id] scalars
    assert_same_error(f"torch.cat([{tensors}])")


def test_squeeze_over_a_tuple_of_dims():
    # a WaveNet script's BatchNorm1d: running_mean ... xmean.squeeze((0, 1))
    snippet = """
        torch.manual_seed(0)
        x = torch.randn(1, 1, 3, requires_grad=True)
        y = x.squeeze((0, -2))
        kept = torch.randn(2, 1, 3).squeeze((0, 1))
        listed = torch.squeeze(torch.randn(1, 1, 3), [0, 1])
        scalar = torch.tensor(1.).squeeze((0,))
        (y * torch.arange(3.)).sum().backward()
        name = type(y.grad_fn).__name__
        grad = x.grad
    """
    ours, theirs = run_both(snippet)
    for name in ("y", "kept", "listed", "scalar", "grad"):
        assert_same(ours[name], theirs[name])
    assert ours["name"] == theirs["name"] == "SqueezeBackward2"
    assert ours["y"]._base is ours["x"]


@pytest.mark.parametrize("dims", ["(0, 0)", "(0, -3)", "(0, 5)"])
def test_squeeze_dims_errors(dims):
    assert_same_error(f"torch.zeros(1, 1, 3).squeeze({dims})")


# ---------------------------------------------------------------- nll_loss's shape checks

@pytest.mark.parametrize("input_shape, target_shape", [
    ((1, 5), ()),  # char_rnn_generation: criterion(output, target_line_tensor[i]), a 0-d target
    ((2, 5, 3), (1, 3)), ((2, 5, 3), (2, 4)), ((2, 5, 3, 4), (2, 3, 5)), ((2, 5, 3, 4), (2, 3)),
    ((2, 5, 3, 4, 2), (2, 3, 4, 1)), ((5,), (2,)), ((2, 5), (2, 1)), ((2, 5), (3,))])
def test_nll_loss_refuses_targets_of_the_wrong_shape(input_shape, target_shape):
    assert_same_error(f"F.nll_loss(torch.zeros{input_shape}, torch.zeros({target_shape}, dtype=torch.long))")


def test_nll_loss_of_a_zero_dim_input():
    assert_same_error("F.nll_loss(torch.tensor(1.), torch.tensor(0))")


def test_nll_loss_shapes_it_accepts():
    snippet = """
        torch.manual_seed(0)
        one_d = F.nll_loss(torch.randn(5).log_softmax(0), torch.tensor(2))
        one_d_one = F.nll_loss(torch.randn(5).log_softmax(0), torch.tensor([2]))
        three_d = F.nll_loss(torch.randn(2, 5, 3).log_softmax(1), torch.tensor([[0, 1, 4], [2, 2, 3]]))
    """
    ours, theirs = run_both(snippet)
    for name in ("one_d", "one_d_one", "three_d"):
        assert_same(ours[name], theirs[name])


# ---------------------------------------------------------------- torch.histogram

def test_histogram_of_activations_as_the_batchnorm_lecture_draws_them():
    # hy, hx = torch.histogram(t, density=True) on a layer's tanh outputs (which require grad)
    snippet = """
        torch.manual_seed(0)
        t = torch.tanh(torch.randn(32, 100, requires_grad=True) * 2)
        hy, hx = torch.histogram(t, density=True)
        counts, edges = torch.histogram(t.detach(), bins=7, range=(-1., 1.))
        method = t.histogram(3)
        node = hy.grad_fn.name()
        nexts = len(hy.grad_fn.next_functions)
    """
    ours, theirs = run_both(snippet)
    for name in ("hy", "hx", "counts", "edges"):
        assert_same(ours[name], theirs[name], rtol=0, atol=0)
    assert_same(ours["method"].hist, theirs["method"].hist, rtol=0, atol=0)
    assert ours["node"] == theirs["node"] == "torch::autograd::NotImplemented"
    assert ours["nexts"] == theirs["nexts"] == 1
    assert repr(ours["counts"]) == repr(theirs["counts"])


@pytest.fixture
def torch_on_one_thread():
    """PyTorch's weighted histogram sums each thread's share apart, then adds the shares: gradwalk
    adds in one pass, as PyTorch does on one thread."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_histogram_edges_weights_and_corner_cases(torch_on_one_thread):
    snippet = """
        torch.manual_seed(0)
        x = torch.randn(1000, dtype=torch.float64)
        given = torch.histogram(x, bins=torch.tensor([-1., 0., 0.5, 2.], dtype=torch.float64))
        weighted = torch.histogram(x, bins=5, weight=torch.rand(1000, dtype=torch.float64), density=True)
        one_value = torch.histogram(torch.tensor([1., 1.]), bins=2)
        empty = torch.histogram(torch.tensor([]), bins=3)
        on_edges = torch.histogram(torch.tensor([0., 1., 2., 3.]), bins=3)
        shown = repr(one_value)
    """
    ours, theirs = run_both(snippet)
    for name in ("given", "weighted", "one_value", "empty", "on_edges"):
        for mine, real in zip(ours[name], theirs[name]):
            assert_same(mine, real, rtol=0, atol=0)
    assert ours["shown"] == theirs["shown"]


def test_histogram_has_no_derivative():
    assert_same_error("torch.histogram(torch.randn(5, requires_grad=True), bins=2).hist.sum().backward()")


@pytest.mark.parametrize("call", ["torch.histogram(torch.tensor([1, 2]), bins=2)",
                                  "torch.histogram(torch.tensor([1., 2.]), bins=0)",
                                  "torch.histogram(torch.tensor([1., 2.]), bins=2, range=(3., 1.))"])
def test_histogram_errors(call):
    ours, theirs = raised_by("gradwalk", call), raised_by("torch", call)
    assert type(ours) is type(theirs)
    assert message(ours) == message(theirs)


# ---------------------------------------------------------------- torch.xpu

def test_xpu_is_probed_as_on_a_build_without_it():
    # mnist_forward_forward: use_xpu = not args.no_xpu and torch.xpu.is_available()
    snippet = "available, count = torch.xpu.is_available(), torch.xpu.device_count(); torch.xpu.manual_seed(0)"
    ours, theirs = run_both(snippet)
    assert (ours["available"], ours["count"]) == (theirs["available"], theirs["count"]) == (False, 0)
    with pytest.raises(AssertionError, match="Torch not compiled with XPU enabled"):
        gradwalk.xpu.current_device()
    with pytest.raises(AssertionError, match="Torch not compiled with XPU enabled"):
        torch.xpu.current_device()


def test_printing_a_loss_both_ways():
    assert_same_output("""
        torch.manual_seed(0)
        loss = torch.nn.MSELoss(size_average=False)(torch.randn(3), torch.zeros(3))
        print(loss, loss.item(), f"{loss}")
    """)


# ---------------------------------------------------------------- torch.nn.utils.prune

LENET = """
    class LeNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(1, 6, 3)
            self.fc1 = torch.nn.Linear(6 * 13 * 13, 10)

        def forward(self, x):
            return self.fc1(F.max_pool2d(F.relu(self.conv1(x)), 2).flatten(1))
"""


def test_pruning_a_layer_step_by_step_as_the_tutorial_does():
    snippet = LENET + """
    prune = torch.nn.utils.prune
    torch.manual_seed(0)
    model = LeNet()
    module = model.conv1
    prune.random_unstructured(module, name="weight", amount=0.3)
    after_random = [name for name, _ in module.named_parameters()], [name for name, _ in module.named_buffers()]
    pruned_weight = module.weight
    # (the hooks' ids come from one process-wide counter, so only their number is compared)
    hooks = [type(h).__name__ for h in module._forward_pre_hooks.values()], len(module._forward_pre_hooks)
    prune.l1_unstructured(module, name="bias", amount=3)
    bias = module.bias
    prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
    container = [hook for hook in module._forward_pre_hooks.values() if hook._tensor_name == "weight"][0]
    history = [type(m).__name__ for m in container]
    weight = module.weight
    keys = list(model.state_dict().keys())
    out = model(torch.randn(2, 1, 28, 28))
    out.sum().backward()
    orig_grad = module.weight_orig.grad
    prune.remove(module, "weight")
    after_remove = [name for name, _ in module.named_parameters()], [name for name, _ in module.named_buffers()]
    permanent = module.weight
    """
    ours, theirs = run_both(snippet)
    for name in ("after_random", "hooks", "history", "keys", "after_remove"):
        assert ours[name] == theirs[name], name
    for name in ("pruned_weight", "bias", "weight", "out", "orig_grad", "permanent"):
        assert_same(ours[name], theirs[name], rtol=1e-5, atol=1e-6)
    assert type(ours["pruned_weight"].grad_fn).__name__ == "MulBackward0"
    assert repr(ours["container"]).startswith("<torch.nn.utils.prune.PruningContainer object at ")


def test_global_pruning_and_a_custom_method():
    snippet = LENET + """
    prune = torch.nn.utils.prune
    torch.manual_seed(0)
    model = LeNet()
    prune.global_unstructured([(model.conv1, "weight"), (model.fc1, "weight")],
                              pruning_method=prune.L1Unstructured, amount=0.2)
    sparsity = [float((m.weight == 0).sum()) / m.weight.nelement() for m in (model.conv1, model.fc1)]

    class FooBarPruningMethod(prune.BasePruningMethod):
        PRUNING_TYPE = "unstructured"

        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.flatten()[::2] = 0
            return mask

    FooBarPruningMethod.apply(model.fc1, "bias")
    bias_mask = model.fc1.bias_mask
    pruned = prune.is_pruned(model)
    """
    ours, theirs = run_both(snippet)
    assert ours["sparsity"] == theirs["sparsity"]
    assert_same(ours["bias_mask"], theirs["bias_mask"])
    assert ours["pruned"] is theirs["pruned"] is True


def test_random_structured_pruning_draws_as_pytorch():
    snippet = """
    prune = torch.nn.utils.prune
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 6, 3)
    prune.random_structured(conv, "weight", amount=2, dim=0)
    prune.random_structured(conv, "weight", amount=1, dim=1)
    mask = conv.weight_mask
    """
    ours, theirs = run_both(snippet)
    assert_same(ours["mask"], theirs["mask"])


@pytest.mark.parametrize("call", [
    "prune.l1_unstructured(torch.nn.Linear(2, 2), 'weight', amount=5)",
    "prune.l1_unstructured(torch.nn.Linear(2, 2), 'weight', amount=1.5)",
    "prune.l1_unstructured(torch.nn.Linear(2, 2), 'weight', amount='a')",
    "prune.ln_structured(torch.nn.Linear(2, 2), 'bias', amount=1, n=2, dim=0)",
    "prune.ln_structured(torch.nn.Linear(2, 2), 'weight', amount=1, n=2, dim=3)",
    "prune.remove(torch.nn.Linear(2, 2), 'weight')",
])
def test_pruning_errors(call):
    ours = raised_by("gradwalk", f"prune = torch.nn.utils.prune; {call}")
    theirs = raised_by("torch", f"prune = torch.nn.utils.prune; {call}")
    assert type(ours) is type(theirs)
    assert message(ours).split(" of module ")[0] == message(theirs).split(" of module ")[0]


def test_module_and_tensor_hooks_share_one_counter_from_zero():
    # the pruning tutorial prints module._forward_pre_hooks: OrderedDict([(0, <...RandomUnstructured ...>)])
    snippet = """
    x = torch.randn(2, requires_grad=True)
    ids = [x.register_hook(lambda g: g).id,
           torch.nn.Linear(1, 1).register_forward_pre_hook(lambda m, i: None).id,
           x.register_post_accumulate_grad_hook(lambda t: None).id]
    """
    import subprocess
    import sys
    import textwrap

    program = "import sys; lib = __import__(sys.argv[1]); torch = lib\n" + textwrap.dedent(snippet) + "print(ids)"
    fresh = [subprocess.run([sys.executable, "-c", program, lib], capture_output=True, text=True, check=True).stdout
             for lib in ("gradwalk", "torch")]
    assert fresh[0] == fresh[1] == "[0, 1, 2]\n"


def test_randint_with_high_first_and_size_by_keyword():
    # mnist_forward_forward: torch.tensor(allowed)[torch.randint(len(allowed), size=(1,))]
    snippet = """
    torch.manual_seed(0)
    a = torch.randint(9, size=(3,))
    b = torch.randint(2, 9, size=(3,))
    c = torch.randint(9, (3,))
    picked = torch.tensor([1, 3, 5, 7])[torch.randint(4, size=(1,))].item()
    """
    ours, theirs = run_both(snippet)
    for name in "abc":
        assert_same(ours[name], theirs[name])
    assert ours["picked"] == theirs["picked"]


# ---------------------------------------------------------------- files written by PyTorch's torch.save

def test_a_state_dict_saved_by_pytorch_loads_into_a_gradwalk_model(tmp_path):
    # the FGSM tutorial: model.load_state_dict(torch.load(pretrained_model, map_location='cpu'))
    path = tmp_path / "lenet.pth"
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    torch.save({"model": theirs.state_dict(), "epoch": 7, "moved": torch.arange(6.).reshape(2, 3).t(),
                "dtype": torch.float64, "size": torch.Size([2, 3]), "labels": torch.tensor([1, 0]),
                "mask": torch.tensor([True, False]), "scale": torch.nn.Parameter(torch.ones(2))}, path)
    loaded = gradwalk.load(path, map_location="cpu")
    ours = gradwalk.nn.Sequential(gradwalk.nn.Linear(3, 4), gradwalk.nn.ReLU(), gradwalk.nn.Linear(4, 2))
    ours.load_state_dict(loaded["model"])
    x = [[0.5, -1.0, 2.0]]
    assert_same(ours(gradwalk.tensor(x)), theirs(torch.tensor(x)).detach())
    real = torch.load(path)
    assert loaded["epoch"] == 7 and loaded["dtype"] is gradwalk.float64 and loaded["size"] == gradwalk.Size([2, 3])
    for name in ("moved", "labels", "mask", "scale"):
        assert_same(loaded[name], real[name].detach())
    assert loaded["moved"].stride() == real["moved"].stride() == (1, 3)
    assert type(loaded["scale"]).__name__ == "Parameter" and loaded["scale"].requires_grad
    assert type(loaded["model"]).__name__ == "OrderedDict"


def test_a_numpy_array_saved_by_pytorch_needs_weights_only_false(tmp_path):
    # time_sequence_prediction: torch.from_numpy(torch.load('traindata.pt')) of a saved np.ndarray
    import pickle

    path = tmp_path / "traindata.pt"
    torch.save(np.sin(np.arange(6.0)).reshape(2, 3), path)
    with pytest.raises(pickle.UnpicklingError) as in_torch:
        torch.load(path)
    with pytest.raises(pickle.UnpicklingError) as in_gradwalk:
        gradwalk.load(path)
    assert str(in_gradwalk.value) == str(in_torch.value)
    assert (gradwalk.load(path, weights_only=False) == torch.load(path, weights_only=False)).all()


def test_a_whole_module_saved_by_pytorch_is_refused_as_pytorch_refuses_it(tmp_path):
    import pickle

    path = tmp_path / "model.pt"
    torch.save(torch.nn.Linear(2, 2), path)
    with pytest.raises(pickle.UnpicklingError) as in_torch:
        torch.load(path)
    with pytest.raises(pickle.UnpicklingError) as in_gradwalk:
        gradwalk.load(path)
    assert str(in_gradwalk.value) == str(in_torch.value)


# ---------------------------------------------------------------- add_(Number alpha, Tensor other)

def test_the_deprecated_alpha_first_overload_of_add_and_sub():
    # char_rnn_generation (2017): for p in rnn.parameters(): p.data.add_(-learning_rate, p.grad.data)
    snippet = """
    x, y = torch.arange(3.), torch.ones(3)
    a, b = x.add(2, y), x.sub(2, y)
    c, d = torch.add(x, 0.5, y), torch.sub(x, 0.5, y)
    e = x.clone(); e.add_(-0.1, y)
    f = x.clone(); f.sub_(-0.1, y)
    """
    ours, theirs = run_both(snippet)
    for name in "abcdef":
        assert_same(ours[name], theirs[name])


def test_the_deprecated_overload_warns_once_with_pytorchs_words():
    import subprocess
    import sys

    program = ("import sys, warnings; warnings.simplefilter('always'); torch = __import__(sys.argv[1]); "
               "x = torch.zeros(2); x.add_(2, torch.ones(2)); x.sub(2, torch.ones(2)); x.add(2, torch.ones(2))")
    texts = [subprocess.run([sys.executable, "-c", program, lib], capture_output=True, text=True, check=True).stderr
             for lib in ("gradwalk", "torch")]
    ours, theirs = ([line for line in text.splitlines() if "Warning" in line or line.startswith("\t")]
                    for text in texts)
    assert [line.split("UserWarning: ")[-1].split(" (Triggered")[0] for line in ours] == \
           [line.split("UserWarning: ")[-1].split(" (Triggered")[0] for line in theirs]
    assert sum("deprecated" in line for line in theirs) == 1
