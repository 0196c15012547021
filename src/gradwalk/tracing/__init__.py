"""Watching whole scripts: ``gradwalk trace`` and ``gradwalk dot``.

* ``torch_alias.py``  — ``import torch`` (and ``torch.nn``, ``torch.optim``, ...) served by gradwalk;
* ``names.py``        — names for tensors, read from the user's variables at the backward() call;
* ``cli.py``          — ``gradwalk trace SCRIPT.py [--json] [--mode topo] [--torch]``;
* ``torch_runner.py`` — the same script on real PyTorch, a pre-hook on every node (for ``--torch``);
* ``dot_cli.py``      — ``gradwalk dot SCRIPT.py``: the DOT source of every backward graph.
"""
