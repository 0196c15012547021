"""Optimizers beside PyTorch's: identical weights, data and options give identical parameters
after several steps; schedulers give the same learning rates."""
import warnings

import numpy as np
import pytest
import torch

import gradwalk
from conftest import assert_same

rng = np.random.default_rng(2)
X = rng.standard_normal((8, 3)).astype(np.float32)
Y = rng.standard_normal((8, 2)).astype(np.float32)


def twin_models(seed=0):
    """The same model in both libraries, from the same seed: the same initial weights."""
    gradwalk.manual_seed(seed)
    ours = gradwalk.nn.Sequential(gradwalk.nn.Linear(3, 4), gradwalk.nn.Tanh(), gradwalk.nn.Linear(4, 2))
    torch.manual_seed(seed)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    return ours, theirs


def train(lib, model, opt, steps=6, scheduler=None):
    x, y = lib.tensor(X), lib.tensor(Y)
    for _ in range(steps):
        opt.zero_grad()
        loss = lib.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        if scheduler is not None:
            scheduler.step()


OPTIMIZERS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.8, nesterov=True, weight_decay=0.05)),
    ("SGD", dict(lr=0.1, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.02, amsgrad=True, weight_decay=0.01)),
    ("Adam", dict(lr=0.02, maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.02, weight_decay=0.1, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, weight_decay=0.1, momentum=0.5)),
    ("RMSprop", dict(lr=0.005, centered=True, momentum=0.9, eps=1e-6)),
]


@pytest.mark.parametrize("name,options", OPTIMIZERS, ids=[f"{n}-{o}" for n, o in OPTIMIZERS])
def test_optimizer_steps_match_torch(name, options):
    ours, theirs = twin_models()
    train(gradwalk, ours, getattr(gradwalk.optim, name)(ours.parameters(), **options))
    train(torch, theirs, getattr(torch.optim, name)(theirs.parameters(), **options))
    for (key, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_same(p, q, rtol=1e-5, atol=1e-6)


def test_param_groups_with_their_own_options_match_torch():
    ours, theirs = twin_models()

    def groups(model):
        return [{"params": model[0].parameters(), "lr": 0.05, "momentum": 0.9},
                {"params": model[2].parameters()}]

    train(gradwalk, ours, gradwalk.optim.SGD(groups(ours), lr=0.2))
    train(torch, theirs, torch.optim.SGD(groups(theirs), lr=0.2))
    for p, q in zip(ours.parameters(), theirs.parameters()):
        assert_same(p, q, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make", [
    lambda lib, opt: lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5),
    lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=0.01),
], ids=["StepLR", "CosineAnnealingLR"])
def test_schedulers_give_torch_learning_rates(make):
    def rates(lib):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.4)
        sched = make(lib, opt)
        seen = [sched.get_last_lr()[0]]
        for _ in range(12):
            opt.step()
            sched.step()
            seen.append(sched.get_last_lr()[0])
        return seen

    np.testing.assert_allclose(rates(gradwalk), rates(torch), rtol=1e-12)


def test_training_with_a_scheduler_matches_torch():
    ours, theirs = twin_models()
    opt_g = gradwalk.optim.Adam(ours.parameters(), lr=0.05)
    opt_p = torch.optim.Adam(theirs.parameters(), lr=0.05)
    train(gradwalk, ours, opt_g, 8, gradwalk.optim.lr_scheduler.CosineAnnealingLR(opt_g, 8))
    train(torch, theirs, opt_p, 8, torch.optim.lr_scheduler.CosineAnnealingLR(opt_p, 8))
    for p, q in zip(ours.parameters(), theirs.parameters()):
        assert_same(p, q, rtol=1e-5, atol=1e-6)


def test_scheduler_before_optimizer_step_warns():
    opt = gradwalk.optim.SGD([gradwalk.zeros(1, requires_grad=True)], lr=0.1)
    sched = gradwalk.optim.lr_scheduler.StepLR(opt, 1)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before"):
        sched.step()


def test_zero_grad_sets_to_none_or_zeroes():
    w = gradwalk.ones(2, requires_grad=True)
    opt = gradwalk.optim.SGD([w], lr=0.1)
    (w * 3).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert w.grad is not None and not w.grad._data.any()
    opt.zero_grad()
    assert w.grad is None


def test_state_dict_round_trip_resumes_identically():
    ours, _ = twin_models()
    copy, _ = twin_models()
    copy.load_state_dict(ours.state_dict())
    opt = gradwalk.optim.Adam(ours.parameters(), lr=0.01)
    train(gradwalk, ours, opt, 3)
    copy.load_state_dict(ours.state_dict())
    opt2 = gradwalk.optim.Adam(copy.parameters(), lr=0.01)
    opt2.load_state_dict(opt.state_dict())
    train(gradwalk, ours, opt, 3)
    train(gradwalk, copy, opt2, 3)
    for p, q in zip(ours.parameters(), copy.parameters()):
        np.testing.assert_array_equal(p._data, q._data)
    sd = opt.state_dict()
    assert sd["param_groups"][0]["params"] == [0, 1, 2, 3] and set(sd["state"]) == {0, 1, 2, 3}
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq"}


def test_state_dict_keys_match_torch():
    ours, theirs = twin_models()
    opt_g = gradwalk.optim.SGD(ours.parameters(), lr=0.1, momentum=0.9)
    opt_p = torch.optim.SGD(theirs.parameters(), lr=0.1, momentum=0.9)
    train(gradwalk, ours, opt_g, 1)
    train(torch, theirs, opt_p, 1)
    g, p = opt_g.state_dict(), opt_p.state_dict()
    assert g["param_groups"] == p["param_groups"]
    assert {k: set(v) for k, v in g["state"].items()} == {k: set(v) for k, v in p["state"].items()}


@pytest.mark.parametrize("make", [
    lambda lib: lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1, nesterov=True),
    lambda lib: lib.optim.SGD([], lr=0.1),
    lambda lib: lib.optim.Adam([lib.zeros(1, requires_grad=True)], betas=(1.0, 0.9)),
    lambda lib: lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=-1),
], ids=["nesterov", "empty", "beta", "lr"])
def test_bad_options_raise_torch_errors(make):
    with pytest.raises(ValueError) as theirs:
        make(torch)
    with pytest.raises(ValueError) as ours:
        make(gradwalk)
    assert str(ours.value) == str(theirs.value)


def test_closure_is_called_with_grad_enabled():
    w = gradwalk.tensor([1.0], requires_grad=True)
    opt = gradwalk.optim.SGD([w], lr=0.5)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with gradwalk.no_grad(), warnings.catch_warnings():
        loss = opt.step(closure)
    assert loss.item() == 1.0 and w.item() == 0.0
