"""gradwalk trains real networks: the seeds' XOR, micrograd's moons, scikit-learn's digits with
an MLP and a CNN. Each training runs twice, the same code on gradwalk and on PyTorch
(``train(..., torch=torch)``), from the same seed: same initial weights, same batches, so the
same numbers come out.

Tolerances, and why: losses are float32 sums and matrix products whose terms PyTorch (MKL,
oneDNN) and NumPy (OpenBLAS) add in different orders, so they agree to about 1e-7 relative per
step; training carries such differences along. For the MLPs they stay below 1e-5 (we allow 1e-4)
and no prediction changes (we allow one test sample per epoch, a prediction whose two best
scores are within rounding of each other). The CNN trained with Adam amplifies them (a ReLU or
max-pool choice flips, Adam divides tiny gradients by their own size): there the float64 run
agrees to the last bits step after step, and float32 only loosely (losses within 5%, test
accuracy within 3 points after two epochs; 5 of the 360 test samples were seen to differ).
"""
import numpy as np
import torch

import gradwalk
from gradwalk.train.cli import main, train
from gradwalk.train.tasks import make_task


def train_on_both(task, **options):
    return train(task, **options), train(task, torch=torch, **options)


def assert_same_training(ours, theirs, loss_rtol=1e-4, samples=1):
    h, p = ours["history"], theirs["history"]
    assert h["epoch"] == p["epoch"]
    np.testing.assert_allclose(h["loss"], p["loss"], rtol=loss_rtol)
    n_train, n_test = len(ours["task"].x_train), len(ours["task"].x_test)
    np.testing.assert_allclose(h["train_accuracy"], p["train_accuracy"], atol=samples / n_train + 1e-12)
    np.testing.assert_allclose(h["test_accuracy"], p["test_accuracy"], atol=samples / n_test + 1e-12)


def test_xor_trains_as_pytorch_does_to_all_four_right():
    ours, theirs = train_on_both("xor")
    assert_same_training(ours, theirs, samples=0)
    assert ours["test_accuracy"] == theirs["test_accuracy"] == 1.0
    assert ours["final_loss"] < 0.1


def test_moons_trains_as_pytorch_does_and_separates_the_moons():
    ours, theirs = train_on_both("moons")
    assert_same_training(ours, theirs, samples=0)
    assert ours["test_accuracy"] == 1.0


def test_digits_mlp_reaches_what_pytorch_reaches():
    ours, theirs = train_on_both("digits")
    assert_same_training(ours, theirs)
    assert abs(ours["test_accuracy"] - theirs["test_accuracy"]) <= 1 / 360 + 1e-12
    assert ours["test_accuracy"] >= 0.95  # 96.94% for both, seed 0


def test_training_is_reproducible():
    first, second = train("digits", epochs=2), train("digits", epochs=2)
    assert first["history"] == second["history"]


def test_digits_cnn_in_float64_takes_pytorchs_steps():
    """Same seed, same weights, same batches: 20 Adam steps of the CNN in float64 give PyTorch's
    losses and weights to the last few bits (in float32 they drift apart, see the module's note)."""
    runs = []
    for lib in (gradwalk, torch):
        lib.manual_seed(0)
        task = make_task("digits-cnn", 0, lib)
        model = task.model().double()
        data = lib.utils.data
        dataset = data.TensorDataset(lib.tensor(task.x_train, dtype=lib.float64), lib.tensor(task.y_train))
        loader = data.DataLoader(dataset, batch_size=32, shuffle=True, generator=lib.Generator().manual_seed(0))
        opt, _ = task.optimizer(model, 2e-3, 30, len(loader))
        losses = []
        for _, (xb, yb) in zip(range(20), loader):
            loss = task.loss(model, model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        runs.append((losses, [p.detach().numpy() for p in model.parameters()]))
    (ours, our_weights), (theirs, their_weights) = runs
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    for a, b in zip(our_weights, their_weights, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_digits_cnn_short_run_learns_as_pytorch_does():
    ours, theirs = train_on_both("digits-cnn", epochs=2)
    # float32 Adam on the CNN: the first steps agree to ~1e-7, then drift (float64 above agrees)
    np.testing.assert_allclose(ours["history"]["loss"], theirs["history"]["loss"], rtol=5e-2)
    assert abs(ours["test_accuracy"] - theirs["test_accuracy"]) <= 0.03
    assert ours["test_accuracy"] >= 0.85 and theirs["test_accuracy"] >= 0.85


def test_cli_prints_a_report_and_saves_a_plot(tmp_path, capsys):
    path = tmp_path / "xor.png"
    assert main(["xor", "--quiet", "--plot", str(path)]) == 0
    out = capsys.readouterr().out
    assert "accuracy        100.00%" in out and str(path) in out and "(on gradwalk)" in out
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_runs_the_same_training_on_pytorch(capsys):
    assert main(["xor", "--quiet", "--no-plot", "--torch"]) == 0
    theirs = capsys.readouterr().out
    main(["xor", "--quiet", "--no-plot"])
    ours = capsys.readouterr().out
    assert f"(on PyTorch {torch.__version__})" in theirs

    def figures(out):
        return [line for line in out.splitlines() if line.startswith(("final loss", "accuracy"))]
    assert figures(ours) == figures(theirs)


def test_cli_progress_bar_goes_to_stderr(tmp_path, capsys):
    main(["moons", "--epochs", "3", "--no-plot"])
    assert "train moons" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
