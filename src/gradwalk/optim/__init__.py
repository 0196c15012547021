"""``gradwalk.optim``: PyTorch's optimizers, updating parameters in place with NumPy.

    >>> opt = gradwalk.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    >>> opt.zero_grad(); loss.backward(); opt.step()
"""
from . import lr_scheduler  # noqa: F401
from .adadelta import Adadelta  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .rmsprop import RMSprop  # noqa: F401
from .sgd import SGD  # noqa: F401
