"""The four training tasks of ``gradwalk train``: data, model, loss and optimizer for each,
written as one writes them with PyTorch. Each task takes the library it runs on (``torch``:
gradwalk by default, or real PyTorch), and uses only PyTorch's public API, so the same code
trains on both and, from the same seed, prints the same numbers."""
from dataclasses import dataclass, field

import numpy as np

import gradwalk


@dataclass
class Task:
    name: str
    description: str
    epochs: int
    lr: float
    batch_size: int  # 0: the whole training set in one batch
    x_train: np.ndarray = field(repr=False, default=None)
    y_train: np.ndarray = field(repr=False, default=None)
    x_test: np.ndarray = field(repr=False, default=None)
    y_test: np.ndarray = field(repr=False, default=None)
    torch: object = field(repr=False, default=gradwalk)  # the library: gradwalk or torch

    def model(self):
        raise NotImplementedError

    def optimizer(self, model, lr, epochs, steps_per_epoch):
        """The optimizer and an optional scheduler stepped once per epoch."""
        return self.torch.optim.SGD(model.parameters(), lr=lr), None

    def loss(self, model, output, target):
        raise NotImplementedError

    def correct(self, output, target):
        """How many predictions in the batch are right."""
        return int(((output > 0) == (target > 0)).sum().item())


class Xor(Task):
    """The seeds' XOR: a 2-4-1 tanh MLP, targets -1/+1, squared error, plain gradient descent."""

    def __init__(self, torch=gradwalk):
        x = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=np.float32)
        y = np.array([[-1], [1], [1], [-1]], dtype=np.float32)
        super().__init__("xor", "XOR with a 2-4-1 tanh MLP", epochs=300, lr=0.05, batch_size=0,
                         x_train=x, y_train=y, x_test=x, y_test=y, torch=torch)

    def model(self):
        nn = self.torch.nn
        return nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1), nn.Tanh())

    def loss(self, model, output, target):
        return ((output - target) ** 2).sum()


class Moons(Task):
    """micrograd's demo: two moons, a 2-16-16-1 ReLU MLP, max-margin (hinge) loss with L2
    regularisation, SGD whose rate decays from 1.0 to 0.1."""

    def __init__(self, seed, torch=gradwalk):
        make_moons = _sklearn().datasets.make_moons

        x, y = make_moons(n_samples=100, noise=0.1, random_state=seed)
        x = x.astype(np.float32)
        y = (y * 2 - 1).astype(np.float32).reshape(-1, 1)  # -1 / +1
        super().__init__("moons", "micrograd's moons demo: 2-16-16-1 ReLU MLP, hinge loss", epochs=200,
                         lr=1.0, batch_size=0, x_train=x, y_train=y, x_test=x, y_test=y, torch=torch)

    def model(self):
        nn = self.torch.nn
        return nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))

    def optimizer(self, model, lr, epochs, steps_per_epoch):
        opt = self.torch.optim.SGD(model.parameters(), lr=lr)
        # micrograd: learning_rate = 1.0 - 0.9*k/100
        decay = self.torch.optim.lr_scheduler.LambdaLR(opt, lambda k: 1.0 - 0.9 * k / epochs)
        return opt, decay

    def loss(self, model, output, target):
        hinge = self.torch.nn.functional.relu(1 - target * output).mean()
        l2 = sum((p * p).sum() for p in model.parameters())
        return hinge + 1e-4 * l2


def _digits(seed, as_images):
    sklearn = _sklearn()
    load_digits, train_test_split = sklearn.datasets.load_digits, sklearn.model_selection.train_test_split

    digits = load_digits()  # 1797 8x8 images, shipped inside scikit-learn
    x = (digits.data / 16.0).astype(np.float32)
    if as_images:
        x = x.reshape(-1, 1, 8, 8)
    return train_test_split(x, digits.target.astype(np.int64), test_size=0.2, random_state=seed,
                            stratify=digits.target)


class Digits(Task):
    """scikit-learn's 8x8 digits with a 64-128-128-10 ReLU MLP, cross-entropy, Adam."""

    def __init__(self, seed, torch=gradwalk):
        x_train, x_test, y_train, y_test = _digits(seed, as_images=False)
        super().__init__("digits", "8x8 digits with a 64-128-128-10 MLP", epochs=40, lr=2e-3, batch_size=32,
                         x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test, torch=torch)

    def model(self):
        nn = self.torch.nn
        return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10))

    def optimizer(self, model, lr, epochs, steps_per_epoch):
        opt = self.torch.optim.Adam(model.parameters(), lr=lr)
        return opt, self.torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)

    def loss(self, model, output, target):
        return self.torch.nn.functional.cross_entropy(output, target)

    def correct(self, output, target):
        return int((output.argmax(1) == target).sum().item())


class DigitsCNN(Digits):
    """The digits as 1x8x8 images: two 3x3 convolutions, a 2x2 max pool, two linear layers."""

    def __init__(self, seed, torch=gradwalk):
        x_train, x_test, y_train, y_test = _digits(seed, as_images=True)
        Task.__init__(self, "digits-cnn", "8x8 digits with a small CNN", epochs=30, lr=2e-3, batch_size=32,
                      x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test, torch=torch)

    def model(self):
        nn = self.torch.nn
        return nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))


def make_task(name, seed=0, torch=gradwalk):
    """The task ``name`` on the library ``torch`` (gradwalk, or PyTorch itself)."""
    tasks = {"xor": Xor, "moons": Moons, "digits": Digits, "digits-cnn": DigitsCNN}
    if name not in tasks:
        raise ValueError(f"unknown task {name!r}; choose one of {', '.join(tasks)}")
    return tasks[name](torch=torch) if name == "xor" else tasks[name](seed, torch=torch)


def _sklearn():
    """scikit-learn's datasets and splitter, or a clear message naming the extra."""
    try:
        import sklearn.datasets
        import sklearn.model_selection  # noqa: F401 - used through sklearn
    except ImportError:
        raise SystemExit("gradwalk train needs scikit-learn (the moons and digits data), which is "
                         "not installed: pip install 'gradwalk[train]'") from None
    return sklearn

