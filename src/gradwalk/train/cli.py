"""``gradwalk train xor | moons | digits | digits-cnn``: train a network for real, with a
progress bar, a final report and a loss/accuracy plot.

    gradwalk train digits --epochs 30 --plot digits.png
    gradwalk train digits --torch        # the same training on real PyTorch, for comparison

Everything is seeded (``--seed``): two runs with the same options print the same numbers, and
PyTorch, seeded the same, starts from the same weights and sees the same batches.
"""
import argparse
import contextlib
import os
import sys
import time

import gradwalk

from .tasks import make_task

TASKS = ("xor", "moons", "digits", "digits-cnn")


def train(task_name, epochs=None, lr=None, batch_size=None, seed=0, progress=False, out=None, threads=1,
          torch=gradwalk):
    """Train one task on ``torch`` (gradwalk, or PyTorch itself); return a dict with the per-epoch
    history and the final figures.

    ``threads`` caps NumPy's BLAS threads (PyTorch's intra-op threads): these matrices are small,
    and on a busy 2-core machine two threads that spin-wait for each other make training ten
    times slower."""
    with _blas_threads(threads), _torch_threads(torch, threads):
        return _train(torch, task_name, epochs, lr, batch_size, seed, progress, out)


@contextlib.contextmanager
def _torch_threads(torch, n):
    if torch is gradwalk:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _blas_threads(n):
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # without threadpoolctl NumPy keeps its own setting
        return contextlib.nullcontext()
    return threadpool_limits(limits=n, user_api="blas")


def _train(torch, task_name, epochs, lr, batch_size, seed, progress, out):
    data = torch.utils.data
    torch.manual_seed(seed)
    task = make_task(task_name, seed, torch)
    epochs = task.epochs if epochs is None else epochs
    lr = task.lr if lr is None else lr
    batch_size = task.batch_size if batch_size is None else batch_size
    x_train, y_train = torch.tensor(task.x_train), torch.tensor(task.y_train)
    x_test, y_test = torch.tensor(task.x_test), torch.tensor(task.y_test)
    n_train = len(task.x_train)
    loader = data.DataLoader(data.TensorDataset(x_train, y_train), batch_size=batch_size or n_train,
                                  shuffle=bool(batch_size), generator=torch.Generator().manual_seed(seed))
    model = task.model()
    opt, scheduler = task.optimizer(model, lr, epochs, len(loader))
    history = {"epoch": [], "loss": [], "train_accuracy": [], "test_accuracy": []}
    bar = _progress(epochs, task.name, progress, out)
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        model.train()
        total_loss, correct = 0.0, 0
        for xb, yb in loader:
            output = model(xb)
            loss = task.loss(model, output, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total_loss += loss.item() * len(xb)
            correct += task.correct(output, yb)
        if scheduler is not None:
            scheduler.step()
        test_accuracy = evaluate(task, model, x_test, y_test)
        history["epoch"].append(epoch)
        history["loss"].append(total_loss / n_train)
        history["train_accuracy"].append(correct / n_train)
        history["test_accuracy"].append(test_accuracy)
        if bar is not None:
            bar.set_postfix(loss=f"{total_loss / n_train:.4f}", test_acc=f"{test_accuracy:.3f}")
            bar.update(1)
    seconds = time.perf_counter() - start
    if bar is not None:
        bar.close()
    return {"task": task, "model": model, "history": history, "seconds": seconds, "epochs": epochs,
            "lr": lr, "batch_size": batch_size or n_train, "samples_per_second": n_train * epochs / seconds,
            "final_loss": history["loss"][-1], "test_accuracy": history["test_accuracy"][-1],
            "parameters": sum(p.numel() for p in model.parameters())}


def evaluate(task, model, x, y):
    model.eval()
    with task.torch.no_grad():
        accuracy = task.correct(model(x), y) / len(x)
    model.train()
    return accuracy


def _progress(total, name, enabled, out):
    if not enabled:
        return None
    out = out or sys.stderr
    if not (hasattr(out, "isatty") and out.isatty()):
        return _Summary(total, name, out)  # a log or a pipe: one line at the end, not one per epoch
    tqdm = require("tqdm", "tqdm").tqdm
    return tqdm(total=total, desc=f"train {name}", unit="epoch", file=out, leave=True)


class _Summary:
    """What the progress bar says, once, when the output is not a terminal."""

    def __init__(self, total, name, out):
        self.total, self.name, self.out = total, name, out
        self.done, self.postfix, self.start = 0, {}, time.perf_counter()

    def set_postfix(self, **values):
        self.postfix = values

    def update(self, n):
        self.done += n

    def close(self):
        figures = ", ".join(f"{k}={v}" for k, v in self.postfix.items())
        print(f"train {self.name}: {self.done}/{self.total} epochs in "
              f"{time.perf_counter() - self.start:.1f} s" + (f", {figures}" if figures else ""),
              file=self.out)


def require(module, package, extra="train"):
    """Import ``module``, or stop with the extra to install (a plain ``pip install gradwalk``
    has none of them)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise SystemExit(f"gradwalk train needs {package}, which is not installed: "
                         f"pip install 'gradwalk[{extra}]'") from None


def report(result):
    task = result["task"]
    test_name = "test accuracy" if task.x_test is not task.x_train else "accuracy"
    library = "gradwalk" if task.torch is gradwalk else f"PyTorch {task.torch.__version__}"
    lines = [
        f"task            {task.name}: {task.description} (on {library})",
        f"model           {result['parameters']} parameters",
        f"training        {result['epochs']} epochs, batch {result['batch_size']}, lr {result['lr']}",
        f"final loss      {result['final_loss']:.4f}",
        f"{test_name:<15} {result['test_accuracy'] * 100:.2f}% ({len(task.x_test)} samples)",
        f"time            {result['seconds']:.1f} s ({result['samples_per_second']:.0f} samples/s)",
    ]
    return "\n".join(lines)


def plot(result, path):
    matplotlib = require("matplotlib", "matplotlib")

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    h = result["history"]
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 4))
    ax_loss.plot(h["epoch"], h["loss"], color="tab:red")
    ax_loss.set(title=f"{result['task'].name}: training loss", xlabel="epoch", ylabel="loss")
    ax_loss.set_yscale("log")
    ax_acc.plot(h["epoch"], h["train_accuracy"], label="train")
    if result["task"].x_test is not result["task"].x_train:
        ax_acc.plot(h["epoch"], h["test_accuracy"], label="test")
    ax_acc.set(title="accuracy", xlabel="epoch", ylabel="accuracy", ylim=(0, 1.02))
    ax_acc.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="gradwalk train", description="Train a network with gradwalk.")
    parser.add_argument("task", choices=TASKS)
    parser.add_argument("--epochs", type=int, help="passes over the training set (default: per task)")
    parser.add_argument("--lr", type=float, help="learning rate (default: per task)")
    parser.add_argument("--batch-size", type=int, help="batch size (default: per task; 0 = full batch)")
    parser.add_argument("--seed", type=int, default=0, help="seed for weights, data split and shuffling")
    parser.add_argument("--plot", metavar="PNG", help="where to save the loss/accuracy plot "
                                                      "(default: ./gradwalk-<task>.png)")
    parser.add_argument("--no-plot", action="store_true", help="do not save a plot")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads for NumPy (default: 1)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--torch", action="store_true", help="run the same training on real PyTorch (if installed)")
    args = parser.parse_args(argv)
    library = gradwalk
    if args.torch:
        try:
            import torch as library
        except ImportError:
            parser.error("--torch needs PyTorch installed (pip install torch)")
    result = train(args.task, args.epochs, args.lr, args.batch_size, args.seed, progress=not args.quiet,
                   threads=args.threads, torch=library)
    print(report(result))
    if not args.no_plot:
        path = os.path.abspath(args.plot or f"gradwalk-{args.task}.png")
        plot(result, path)
        print(f"plot            written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
