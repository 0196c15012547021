"""gradwalk trains real networks: the seeds' XOR, micrograd's moons, scikit-learn's digits with
an MLP and a CNN (the full CNN run, >= 98%, is recorded in benchmarks/RESULTS.md)."""
import torch

import gradwalk
from gradwalk.train.cli import main, train
from gradwalk.train.tasks import make_task
from conftest import assert_same


def test_xor_converges_to_all_four_right():
    result = train("xor")
    assert result["test_accuracy"] == 1.0
    assert result["final_loss"] < 0.1


def test_moons_separates_the_two_moons():
    assert train("moons")["test_accuracy"] == 1.0


def test_digits_mlp_reaches_97_percent():
    result = train("digits")
    assert result["test_accuracy"] >= 0.97


def test_training_is_reproducible():
    first, second = train("digits", epochs=2), train("digits", epochs=2)
    assert first["history"] == second["history"]


def test_digits_cnn_step_matches_torch_on_identical_weights():
    task = make_task("digits-cnn")
    ours = task.model()
    theirs = torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(32 * 4 * 4, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    theirs.load_state_dict({k: torch.tensor(v._data) for k, v in ours.state_dict().items()})
    opt_g = gradwalk.optim.Adam(ours.parameters(), lr=2e-3)
    opt_p = torch.optim.Adam(theirs.parameters(), lr=2e-3)
    x, y = task.x_train[:32], task.y_train[:32]
    for _ in range(2):
        loss_g = gradwalk.nn.functional.cross_entropy(ours(gradwalk.tensor(x)), gradwalk.tensor(y))
        loss_p = torch.nn.functional.cross_entropy(theirs(torch.tensor(x)), torch.tensor(y))
        assert_same(loss_g, loss_p, 1e-5, 1e-6)
        opt_g.zero_grad()
        opt_p.zero_grad()
        loss_g.backward()
        loss_p.backward()
        for p, q in zip(ours.parameters(), theirs.parameters()):
            assert_same(p.grad, q.grad, 1e-4, 1e-6)
        opt_g.step()
        opt_p.step()
    for p, q in zip(ours.parameters(), theirs.parameters()):
        assert_same(p, q, 1e-4, 1e-6)


def test_digits_cnn_short_run_learns():
    result = train("digits-cnn", epochs=2)
    assert result["test_accuracy"] >= 0.85


def test_cli_prints_a_report_and_saves_a_plot(tmp_path, capsys):
    path = tmp_path / "xor.png"
    assert main(["xor", "--quiet", "--plot", str(path)]) == 0
    out = capsys.readouterr().out
    assert "accuracy        100.00%" in out and str(path) in out
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_progress_bar_goes_to_stderr(tmp_path, capsys):
    main(["moons", "--epochs", "3", "--no-plot"])
    assert "train moons" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
