"""``torch.amp`` on a machine without a GPU: ``autocast`` and ``GradScaler`` as a CPU-only
PyTorch build has them.

Asked for CUDA (``torch.autocast("cuda")``, minGPT's ``@autocast()``, ``GradScaler()``), PyTorch
warns that CUDA is not available and runs with autocast (or scaling) off; so does gradwalk, with
PyTorch's warnings. CPU autocast computes matmuls in bfloat16 in PyTorch; NumPy has no bfloat16,
so gradwalk refuses it with an error that says so rather than run in float32 unannounced.
"""
import functools
import warnings


class autocast:  # noqa: N801 - PyTorch's name
    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = enabled
        if enabled and device_type == "cuda":
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", UserWarning,
                          stacklevel=2)
            self._enabled = False
        elif enabled and device_type not in ("cpu", "cuda"):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")

    def __enter__(self):
        if self._enabled:
            raise NotImplementedError("gradwalk: autocast on the CPU (bfloat16/float16 matmuls) is not supported: "
                                      "NumPy has no bfloat16; run without autocast (enabled=False)")
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


def is_autocast_available(device_type):
    return device_type == "cpu"


class GradScaler:
    """Loss scaling for float16 training on a GPU; without one PyTorch disables it (with a warning)
    and every method passes through, as here."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if enabled and device == "cuda":
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled:
            raise NotImplementedError(f"gradwalk: GradScaler on device {device!r} is not supported")

    def is_enabled(self):
        return self._enabled

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer):
        pass

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        pass

    def get_scale(self):
        return 1.0

    def state_dict(self):
        return {}

    def load_state_dict(self, state_dict):
        pass
