"""``torch.func.functional_call`` and ``stack_module_state``: a module run with other tensors in
place of its parameters and buffers (the functional style of the ensembling, per-sample-gradient
and meta-learning tutorials).

    >>> model = gradwalk.nn.Linear(3, 1)
    >>> params = {name: p.detach() * 0 for name, p in model.named_parameters()}
    >>> gradwalk.func.functional_call(model, params, (gradwalk.ones(2, 3),))
    tensor([[0.],
            [0.]])
"""
import contextlib


def _owner(module, name):
    """The submodule holding ``name`` ("layers.0.weight") and the attribute's own name."""
    path, _, leaf = name.rpartition(".")
    return (module.get_submodule(path) if path else module), leaf


@contextlib.contextmanager
def _swapped(module, tensors):
    """Put ``tensors`` (name -> tensor) where the module keeps those parameters and buffers,
    and put the originals back afterwards, even when the call raises."""
    restore = []
    try:
        for name, tensor in tensors.items():
            owner, leaf = _owner(module, name)
            for store in (owner._parameters, owner._buffers):
                if leaf in store:
                    restore.append((store, leaf, store[leaf]))
                    store[leaf] = tensor
                    break
            else:
                restore.append((owner.__dict__, leaf, owner.__dict__.get(leaf, _MISSING)))
                owner.__dict__[leaf] = tensor
        yield
    finally:
        for store, leaf, original in reversed(restore):
            if original is _MISSING:
                store.pop(leaf, None)
            else:
                store[leaf] = original


_MISSING = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """``module(*args, **kwargs)`` with the given tensors standing in for its parameters and
    buffers (by their ``named_parameters()`` names); the module itself is left as it was."""
    if isinstance(parameter_and_buffer_dicts, dict):
        tensors = dict(parameter_and_buffer_dicts)
    else:
        tensors = {}
        for d in parameter_and_buffer_dicts:
            repeated = tensors.keys() & d.keys()
            if repeated:
                raise ValueError(f"{sorted(repeated)} appeared in multiple dictionaries; behavior of "
                                 "functional call is ambiguous")
            tensors.update(d)
    if strict:
        expected = {n for n, _ in module.named_parameters()} | {n for n, _ in module.named_buffers()}
        missing, unexpected = sorted(expected - tensors.keys()), sorted(tensors.keys() - expected)
        if missing or unexpected:
            parts = []
            if unexpected:
                parts.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
            if missing:
                parts.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError("Error(s) in reparametrizing for " + type(module).__name__ + ":\n\t"
                               + "\n\t".join(parts))
    if tie_weights:  # a parameter shared under two names takes the one given tensor under both
        by_identity = {}
        for name, p in list(module.named_parameters(remove_duplicate=False)) + \
                list(module.named_buffers(remove_duplicate=False)):
            by_identity.setdefault(id(p), []).append(name)
        for names in by_identity.values():
            given = [n for n in names if n in tensors]
            if given:
                for n in names:
                    tensors.setdefault(n, tensors[given[0]])
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, tensors):
        return module(*args, **(kwargs or {}))


def stack_module_state(models):
    """The parameters and buffers of same-shaped models stacked along a new first dim:
    ``(params, buffers)``, ready for ``vmap(functional_call-of-one-model)`` over an ensemble.
    The stacked parameters are new leaves that require grad (as PyTorch's)."""
    from ..ops.functions import stack

    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    first_type = type(models[0])
    if not all(type(m) is first_type for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named):
        per_model = [dict(named(m)) for m in models]
        out = {}
        for name, value in per_model[0].items():
            t = stack([d[name].detach() for d in per_model])
            out[name] = t.requires_grad_(value.requires_grad) if value.requires_grad else t
        return out

    return (stacked(lambda m: m.named_parameters()), stacked(lambda m: m.named_buffers()))
