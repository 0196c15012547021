"""PyTorch's ``torch.nn._reduction``: the deprecated ``size_average=`` / ``reduce=`` arguments of
the losses, turned into the ``reduction=`` string they mean (with PyTorch's warning).

``nn.MSELoss(size_average=False)`` is the old spelling of ``reduction="sum"``; tutorials written
before PyTorch 0.4 still use it. Ignoring it would silently average where the script sums.
"""
import warnings


def legacy_get_string(size_average, reduce, emit_warning=True):
    """``size_average``/``reduce`` (either may be None, meaning True) as a ``reduction`` string:
    both true -> "mean", only ``reduce`` -> "sum", ``reduce=False`` -> "none"."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        reduction = "mean"
    elif reduce:
        reduction = "sum"
    else:
        reduction = "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{reduction}' instead.", stacklevel=2)
    return reduction


def get_softmax_dim(name, ndim, stacklevel):
    """``F.softmax(x)`` without ``dim``: PyTorch warns and picks 0 for 0-, 1- and 3-d inputs, else 1."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1
