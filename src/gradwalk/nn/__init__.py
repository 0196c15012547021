"""``gradwalk.nn``: PyTorch's ``torch.nn`` (modules, ``functional``, ``init``, ``Parameter``).

    >>> import gradwalk as torch
    >>> model = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    >>> loss = torch.nn.functional.mse_loss(model(torch.zeros(3, 2)), torch.ones(3, 1))
    >>> loss.backward()
"""
from . import functional, init, utils  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules.module import Module  # noqa: F401
from .modules.instancenorm import InstanceNorm1d, InstanceNorm2d  # noqa: F401
from .parameter import Buffer, Parameter  # noqa: F401
