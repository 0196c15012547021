"""nn modules beside PyTorch's: the same outputs and parameter gradients on identical weights,
the same repr, state_dict keys and error messages."""
import numpy as np
import pytest
import torch

import gradwalk
from gradwalk import nn
from conftest import assert_same, message

rng = np.random.default_rng(1)


def seeded_twins(make, seed=0):
    """The same module built in both libraries from the same seed: the same initial weights."""
    gradwalk.manual_seed(seed)
    ours = make(gradwalk.nn)
    torch.manual_seed(seed)
    theirs = make(torch.nn)
    for (name, a), (_, b) in zip(ours.state_dict().items(), theirs.state_dict().items(), strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)
    return ours, theirs


def check_module(make, x, target_grads=True, rtol=1e-5, atol=1e-6):
    """Build the same module in both libraries from the same seed; compare outputs and grads."""
    ours, theirs = seeded_twins(make)
    gx = gradwalk.tensor(x, requires_grad=x.dtype.kind == "f")
    px = torch.tensor(x, requires_grad=x.dtype.kind == "f")
    out_g, out_p = ours(gx), theirs(px)
    assert_same(out_g, out_p, rtol, atol)
    assert type(out_g.grad_fn).__name__ == type(out_p.grad_fn).__name__
    w = rng.standard_normal(tuple(out_p.shape)).astype(np.float32)
    (out_g * gradwalk.tensor(w)).sum().backward()
    (out_p * torch.tensor(w)).sum().backward()
    if px.requires_grad:
        assert_same(gx.grad, px.grad, rtol, atol)
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_same(p.grad, q.grad, rtol, atol)
    return ours, theirs


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


MODULES = [
    ("Linear", lambda nn: nn.Linear(5, 3), f32(4, 5)),
    ("Linear-3d", lambda nn: nn.Linear(5, 3), f32(2, 4, 5)),
    ("Linear-nobias", lambda nn: nn.Linear(5, 3, bias=False), f32(4, 5)),
    ("Identity", lambda nn: nn.Sequential(nn.Linear(5, 3), nn.Identity()), f32(4, 5)),
    ("Flatten", lambda nn: nn.Sequential(nn.Flatten(), nn.Linear(12, 2)), f32(2, 3, 4)),
    ("ReLU", lambda nn: nn.ReLU(), f32(4, 5)),
    ("LeakyReLU", lambda nn: nn.LeakyReLU(0.1), f32(4, 5)),
    ("GELU", lambda nn: nn.GELU(), f32(4, 5)),
    ("Tanh", lambda nn: nn.Tanh(), f32(4, 5)),
    ("Sigmoid", lambda nn: nn.Sigmoid(), f32(4, 5)),
    ("Softmax", lambda nn: nn.Softmax(dim=1), f32(4, 5)),
    ("LogSoftmax", lambda nn: nn.LogSoftmax(dim=1), f32(4, 5)),
    ("Dropout-eval", lambda nn: nn.Sequential(nn.Linear(5, 5), nn.Dropout(0.5)).eval(), f32(4, 5)),
    ("Dropout-p0", lambda nn: nn.Sequential(nn.Linear(5, 5), nn.Dropout(0.0)), f32(4, 5)),
    ("LayerNorm", lambda nn: nn.LayerNorm(5), f32(4, 5)),
    ("BatchNorm1d", lambda nn: nn.BatchNorm1d(5), f32(4, 5)),
    ("BatchNorm1d-eval", lambda nn: nn.BatchNorm1d(5).eval(), f32(4, 5)),
    ("Conv2d", lambda nn: nn.Conv2d(2, 4, 3, padding=1), f32(2, 2, 6, 6)),
    ("MaxPool2d", lambda nn: nn.MaxPool2d(2), f32(2, 2, 6, 6)),
    ("MLP", lambda nn: nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2)),
     f32(6, 4)),
    ("CNN", lambda nn: nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                                     nn.Linear(4 * 4 * 4, 3)), f32(3, 1, 8, 8)),
]


@pytest.mark.parametrize("name,make,x", MODULES, ids=[m[0] for m in MODULES])
def test_module_matches_torch(name, make, x):
    check_module(make, x, rtol=1e-4, atol=1e-5)


def test_embedding_module_matches_torch():
    ours, theirs = seeded_twins(lambda nn: nn.Embedding(7, 3, padding_idx=0))
    idx = np.array([[0, 3, 3], [6, 1, 0]])
    out_g, out_p = ours(gradwalk.tensor(idx)), theirs(torch.tensor(idx))
    assert_same(out_g, out_p)
    out_g.sum().backward()
    out_p.sum().backward()
    assert_same(ours.weight.grad, theirs.weight.grad)
    assert not ours.weight._data[0].any()


LOSSES = [
    ("MSELoss", lambda nn: nn.MSELoss(), f32(4, 3), f32(4, 3)),
    ("L1Loss", lambda nn: nn.L1Loss(reduction="sum"), f32(4, 3), f32(4, 3)),
    ("CrossEntropyLoss", lambda nn: nn.CrossEntropyLoss(), f32(4, 3), np.array([0, 2, 1, 2])),
    ("NLLLoss", lambda nn: nn.NLLLoss(reduction="sum"), f32(4, 3), np.array([0, 2, 1, 2])),
    ("BCELoss", lambda nn: nn.BCELoss(), rng.random((4, 3)).astype(np.float32),
     rng.integers(0, 2, (4, 3)).astype(np.float32)),
    ("BCEWithLogitsLoss", lambda nn: nn.BCEWithLogitsLoss(), f32(4, 3),
     rng.integers(0, 2, (4, 3)).astype(np.float32)),
]


@pytest.mark.parametrize("name,make,x,t", LOSSES, ids=[m[0] for m in LOSSES])
def test_loss_module_matches_torch(name, make, x, t):
    gx, px = gradwalk.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out_g, out_p = make(gradwalk.nn)(gx, gradwalk.tensor(t)), make(torch.nn)(px, torch.tensor(t))
    assert_same(out_g, out_p, 1e-5, 1e-6)
    assert type(out_g.grad_fn).__name__ == type(out_p.grad_fn).__name__
    out_g.backward()
    out_p.backward()
    assert_same(gx.grad, px.grad, 1e-5, 1e-6)


def test_batchnorm_running_stats_follow_torch_over_steps_then_eval():
    ours, theirs = nn.BatchNorm1d(3, momentum=None), torch.nn.BatchNorm1d(3, momentum=None)
    for _ in range(3):
        x = f32(5, 3) * 3 + 2
        ours(gradwalk.tensor(x))
        theirs(torch.tensor(x))
    for key, value in theirs.state_dict().items():
        assert_same(ours.state_dict()[key], value, 1e-5, 1e-6)
    x = f32(2, 3)
    assert_same(ours.eval()(gradwalk.tensor(x)), theirs.eval()(torch.tensor(x)), 1e-5, 1e-6)


def test_reprs_match_torch():
    def build(nn):
        return nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, stride=2, bias=False),
            nn.BatchNorm1d(4), nn.LayerNorm(4), nn.Embedding(10, 3, padding_idx=0), nn.Dropout(0.2),
            nn.Flatten(), nn.Linear(2, 4), nn.Tanh(), nn.Sigmoid(), nn.GELU(), nn.LeakyReLU(),
            nn.Softmax(dim=1), nn.LogSoftmax(dim=-1), nn.Identity(), nn.MSELoss(), nn.CrossEntropyLoss(),
            nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU()]),
            nn.ModuleDict({"a": nn.Linear(1, 1)}), nn.Sequential(nn.Linear(3, 3)))

    assert repr(build(gradwalk.nn)) == repr(build(torch.nn))


def test_parameter_repr_and_kind():
    data = [1.0, 2.0]
    assert repr(nn.Parameter(gradwalk.tensor(data))) == repr(torch.nn.Parameter(torch.tensor(data)))
    p = nn.Parameter(gradwalk.tensor(data))
    assert p.requires_grad and p.is_leaf and isinstance(p, gradwalk.Tensor)
    assert type(p * 2) is gradwalk.Tensor
    assert not nn.Parameter(gradwalk.tensor(data), requires_grad=False).requires_grad


def test_tree_walking_names_match_torch():
    def build(nn):
        torch_like = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.Tanh(), nn.Linear(3, 1)))
        torch_like.add_module("bn", nn.BatchNorm1d(1))
        return torch_like

    ours, theirs = build(gradwalk.nn), build(torch.nn)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert len(list(ours.modules())) == len(list(theirs.modules()))


def test_shared_parameters_are_listed_once():
    lin = nn.Linear(2, 2)
    model = nn.Sequential(lin, lin)
    assert len(list(model.parameters())) == 2


def test_load_state_dict_errors_match_torch():
    def attempt(lib, state):
        model = lib.nn.Sequential(lib.nn.Linear(2, 3))
        try:
            model.load_state_dict(state(lib))
        except RuntimeError as e:
            return message(e)
        raise AssertionError("no error")

    missing_and_extra = lambda lib: {"0.weight": lib.zeros(3, 2), "0.extra": lib.zeros(1)}
    assert attempt(gradwalk, missing_and_extra) == attempt(torch, missing_and_extra)
    wrong_shape = lambda lib: {"0.weight": lib.zeros(2, 2), "0.bias": lib.zeros(3)}
    assert attempt(gradwalk, wrong_shape) == attempt(torch, wrong_shape)


def test_load_state_dict_copies_values_and_reports_keys():
    a, b = nn.Linear(2, 3), nn.Linear(2, 3)
    result = b.load_state_dict(a.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    assert np.array_equal(a.weight._data, b.weight._data) and a.weight._data is not b.weight._data
    result = b.load_state_dict({"weight": a.weight}, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == []


def test_linear_default_init_bounds_follow_torch():
    gradwalk.manual_seed(0)
    layer = nn.Linear(100, 50)
    bound = 1 / np.sqrt(100)  # kaiming_uniform(a=sqrt(5)) gives the same bound as the bias
    assert np.abs(layer.weight._data).max() <= bound and np.abs(layer.weight._data).max() > 0.9 * bound
    assert np.abs(layer.bias._data).max() <= bound
    assert layer.weight.dtype is gradwalk.float32


def test_init_functions():
    w = gradwalk.empty(64, 32)
    assert nn.init.calculate_gain("relu") == torch.nn.init.calculate_gain("relu")
    assert nn.init.calculate_gain("leaky_relu", 0.2) == torch.nn.init.calculate_gain("leaky_relu", 0.2)
    nn.init.zeros_(w)
    assert not w._data.any()
    nn.init.ones_(w)
    assert (w._data == 1).all()
    nn.init.constant_(w, 0.3)
    assert np.allclose(w._data, 0.3)
    nn.init.xavier_uniform_(w)
    assert np.abs(w._data).max() <= np.sqrt(6 / 96)
    nn.init.kaiming_uniform_(w, nonlinearity="relu")
    assert np.abs(w._data).max() <= np.sqrt(6 / 32)
    nn.init.kaiming_normal_(w)
    assert abs(w._data.std() - np.sqrt(2 / 32)) < 0.02
    nn.init.xavier_normal_(w)
    assert abs(w._data.std() - np.sqrt(2 / 96)) < 0.02
    nn.init.normal_(w, 1.0, 0.5)
    nn.init.uniform_(w, -2, 2)
    assert np.abs(w._data).max() <= 2


def test_train_eval_apply_zero_grad_and_to():
    model = nn.Sequential(nn.Linear(2, 2), nn.Dropout())
    assert model.training and model[1].training
    model.eval()
    assert not model[1].training
    seen = []
    model.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "Dropout", "Sequential"]
    model(gradwalk.ones(1, 2)).sum().backward()
    model.zero_grad(set_to_none=False)
    assert model[0].weight.grad is not None and not model[0].weight.grad._data.any()
    model.zero_grad()
    assert model[0].weight.grad is None
    model.to(gradwalk.float64)
    assert model[0].weight.dtype is gradwalk.float64
    assert model(gradwalk.ones(1, 2, dtype=gradwalk.float64)).dtype is gradwalk.float64


def test_register_buffer_and_forward_hooks():
    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("factor", gradwalk.tensor(2.0))
            self.register_buffer("scratch", gradwalk.tensor(0.0), persistent=False)

        def forward(self, x):
            return x * self.factor

    m = Scale()
    assert list(m.state_dict()) == ["factor"]
    calls = []
    handle = m.register_forward_hook(lambda mod, args, out: calls.append(out.item()) or out * 10)
    assert m(gradwalk.tensor(1.5)).item() == 30.0
    handle.remove()
    assert m(gradwalk.tensor(1.5)).item() == 3.0 and calls == [3.0]


def test_assigning_a_tensor_to_a_parameter_slot_fails_like_torch():
    for lib in (gradwalk, torch):
        with pytest.raises(TypeError) as err:
            lib.nn.Linear(2, 2).weight = lib.zeros(2, 2)
        assert "cannot assign 'torch.FloatTensor' as parameter 'weight'" in str(err.value)


def test_containers_index_and_iterate():
    seq = nn.Sequential(nn.Linear(1, 2), nn.ReLU(), nn.Linear(2, 1))
    assert isinstance(seq[0], nn.Linear) and isinstance(seq[-1], nn.Linear) and len(seq) == 3
    assert isinstance(seq[1:], nn.Sequential) and len(seq[1:]) == 2
    layers = nn.ModuleList([nn.Linear(1, 1)])
    layers.append(nn.ReLU())
    assert [type(m).__name__ for m in layers] == ["Linear", "ReLU"]
    d = nn.ModuleDict({"enc": nn.Linear(1, 1)})
    assert "enc" in d and list(d.keys()) == ["enc"]
    assert len(list(nn.Sequential(layers, d).parameters())) == 4
