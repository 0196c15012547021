"""Names for the tensors of a backward graph, read from the caller's variables.

At a ``loss.backward()`` call in a script, ``w`` is the tensor bound to the name ``w`` in that
frame, and ``model.0.weight`` a parameter of the module bound to ``model``. Works for gradwalk
and for real PyTorch tensors alike (the ``--torch`` comparison names both sides the same way).
"""


def names_in_frame(frame, tensor_type):
    """``{tensor: name}`` for the tensors and module parameters visible in ``frame``; local
    names win over global ones."""
    names = {}
    if frame is None:
        return names
    for scope in (frame.f_globals, frame.f_locals):
        for name, value in list(scope.items()):
            if name.startswith("_"):
                continue
            if isinstance(value, tensor_type):
                names[value] = name
            elif callable(getattr(value, "named_parameters", None)) and not isinstance(value, type):
                try:
                    params = list(value.named_parameters())
                except Exception:  # not a module after all
                    continue
                for param_name, param in params:
                    names[param] = f"{name}.{param_name}"
    return names
