"""``Optimizer``: parameter groups, per-parameter state, ``zero_grad`` and state dicts.

Each algorithm (``sgd.py``, ``adam.py``, ``rmsprop.py``) updates ``p._data`` in place with NumPy,
outside autograd, following PyTorch's single-tensor code line by line, so that given the same
weights and gradients it makes the same updates.
"""
from collections import defaultdict
from copy import deepcopy

from ..tensor import Tensor


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def zero_grads(params, set_to_none=True):
    """``Optimizer.zero_grad`` and ``Module.zero_grad``: drop each ``.grad``, or zero it in place."""
    if set_to_none:
        for p in params:
            p._grad = None
        return
    for p in params:
        if p._grad is None:
            continue
        if p._grad.grad_fn is not None:
            p._grad = p._grad.detach()
        p._grad._data[...] = 0
        p._grad._version_counter[0] += 1


class Optimizer:
    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or "
                            f"dicts, but got {params.type()}")
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the "
                            "ordering of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in seen for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            zero_grads(group["params"], set_to_none)

    def step(self, closure=None):
        raise NotImplementedError

    def _closure_loss(self, closure):
        """Run ``closure`` with grad enabled (it usually calls backward) and return its loss."""
        self._opt_called = True
        if closure is None:
            return None
        from ..grad_mode import enable_grad

        with enable_grad():
            return closure()

    # ------------------------------------------------------------------ state dicts
    def state_dict(self):
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: dict(values) for p, values in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        state_dict = deepcopy(state_dict)
        groups, saved_groups = self.param_groups, state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size "
                             "of optimizer's group")
        params_by_index = {}
        for group, saved in zip(groups, saved_groups):
            for index, p in zip(saved["params"], group["params"]):
                params_by_index[index] = p
        self.state = defaultdict(dict)
        for index, values in state_dict["state"].items():
            p = params_by_index[int(index)]
            self.state[p] = {k: _like_param(v, p, k) for k, v in values.items()}
        for group, saved in zip(groups, saved_groups):
            params = group["params"]
            group.clear()
            group.update({k: v for k, v in saved.items() if k != "params"})
            group["params"] = params

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)


def _like_param(value, p, key):
    """Loaded state follows the parameter's dtype (except ``step``, kept as saved)."""
    if isinstance(value, Tensor) and key != "step" and value.dtype.is_floating_point:
        return Tensor._make(value._data.astype(p._data.dtype, copy=True))
    return value
