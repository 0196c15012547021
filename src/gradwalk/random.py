"""``torch.random`` and ``torch.Generator``: PyTorch's CPU random number generator, bit for bit.

PyTorch's CPU generator (ATen's ``CPUGeneratorImpl``) is a 32-bit Mersenne Twister, mt19937:

* ``manual_seed(s)`` fills its 624 words from ``s & 0xffffffff`` (Matsumoto and Nishimura's
  ``init_genrand``) and remembers the whole 64-bit ``s`` for ``initial_seed()``;
* a draw is ``random()``, one 32-bit word, or ``random64()``, two words, the first the high half;
* Box-Muller makes normals two at a time: the one-at-a-time kernel keeps the second one in the
  generator (``next_double_normal_sample``) for the next call;
* ``get_state()`` is a 5056-byte ``uint8`` tensor, the C struct ``CPUGeneratorImplState``, so a
  state saved by PyTorch loads here and the other way round.

NumPy's ``MT19937`` is the same engine. We give it the words PyTorch would have and let it draw
thousands of words per call in C; ``gradwalk._distributions`` turns words into values exactly as
ATen does.

    >>> import gradwalk as torch
    >>> g = torch.Generator().manual_seed(2147483647)
    >>> torch.rand(3, generator=g)
    tensor([0.7081, 0.3542, 0.1054])
"""
import contextlib
import os

import numpy as np

from . import _distributions

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "fork_rng"]

_N = 624  # mt19937's words
_DEFAULT_SEED = 67280421310721  # at::default_rng_seed_val: what torch.Generator() starts from

# CPUGeneratorImplState (aten/src/ATen/CPUGeneratorImpl.cpp): the legacy TH struct, whose state
# words are 64-bit, then the float normal cache. Padding bytes are zero, as PyTorch writes them.
_STATE = np.dtype([
    ("the_initial_seed", "<u8"), ("left", "<i4"), ("seeded", "<i4"), ("next", "<u8"),
    ("state", "<u8", (_N,)),
    ("normal_x", "<f8"), ("normal_y", "<f8"), ("normal_rho", "<f8"), ("normal_is_valid", "<i4"),
    ("_pad0", "<u4"), ("next_float_normal_sample", "<f4"), ("is_next_float_normal_sample_valid", "u1"),
    ("_pad1", "u1", (3,)),
])
assert _STATE.itemsize == 5056


def _unpack_seed(seed):
    """A seed as PyTorch's ``Generator.manual_seed`` reads it: any int in [-2**63, 2**64); negative
    ones wrap around to uint64."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not -(1 << 63) <= seed < (1 << 64):
        raise ValueError("Overflow when unpacking long long")
    return seed & 0xFFFFFFFFFFFFFFFF


def _init_genrand(seed32):
    """mt19937's seeding: ``state[0] = seed``, ``state[j] = 1812433253 * (s ^ (s >> 30)) + j``.
    (NumPy's ``MT19937._legacy_seeding`` is the same recurrence in C; tests check they agree.)"""
    key = np.empty(_N, dtype=np.uint32)
    x = seed32
    for j in range(_N):
        key[j] = x
        x = (1812433253 * (x ^ (x >> 30)) + j + 1) & 0xFFFFFFFF
    return key


class Generator:
    """``torch.Generator``: PyTorch's CPU generator, mt19937, with its seed and state.

        >>> g = Generator().manual_seed(0)
        >>> g.initial_seed()
        0
    """

    def __init__(self, device="cpu"):
        if str(device) != "cpu":
            raise RuntimeError(f"gradwalk has only CPU generators, not {device!r}")
        self._bits = np.random.MT19937(0)
        self._state_view = None  # _state_words
        self._numpy = np.random.Generator(self._bits)  # draws whole arrays of words in C
        self.manual_seed(_DEFAULT_SEED)

    @property
    def device(self):
        from ._device import device

        return device("cpu")

    # --- seeding -----------------------------------------------------------------------------

    def manual_seed(self, seed):
        seed = _unpack_seed(seed)
        self._seed = seed
        if hasattr(self._bits, "_legacy_seeding"):  # init_genrand in C (RandomState's seeding)
            self._bits._legacy_seeding(seed & 0xFFFFFFFF)
        else:
            self._bits.state = {"bit_generator": "MT19937",
                                "state": {"key": _init_genrand(seed & 0xFFFFFFFF), "pos": _N}}
        # PyTorch's engine after seeding: left_ = 1, next_ = 0 (the first draw twists). NumPy's
        # pos = 624 twists too; _fresh_next keeps PyTorch's next_ for get_state until a draw.
        self._fresh_next = 0
        self._next_double_normal = None
        self._next_float_normal = None
        return self

    def seed(self):
        """A non-deterministic seed (from the OS), set and returned."""
        value = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(value)
        return value

    def initial_seed(self):
        return self._seed

    # --- state -------------------------------------------------------------------------------

    def get_state(self):
        """The state as PyTorch lays it out: a 5056-element ``uint8`` tensor."""
        numpy_state = self._bits.state["state"]
        record = np.zeros((), dtype=_STATE)
        record["the_initial_seed"] = self._seed
        record["seeded"] = 1
        if self._fresh_next is not None:
            record["left"], record["next"] = 1, self._fresh_next
        else:  # NumPy has drawn pos words since its last twist; PyTorch's left_ counts down to it
            pos = int(numpy_state["pos"])
            record["left"], record["next"] = _N + 1 - pos, pos
        record["state"] = numpy_state["key"]
        if self._next_double_normal is not None:
            record["normal_is_valid"] = 1
            record["normal_y"] = self._next_double_normal
        if self._next_float_normal is not None:
            record["is_next_float_normal_sample_valid"] = 1
            record["next_float_normal_sample"] = self._next_float_normal
        from .tensor import Tensor

        return Tensor._make(np.frombuffer(record.tobytes(), dtype=np.uint8).copy())

    def set_state(self, new_state):
        """Load a state from ``get_state`` (ours or PyTorch's)."""
        from .tensor import Tensor

        if not isinstance(new_state, Tensor) or new_state._data.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        data = np.ascontiguousarray(new_state._data).reshape(-1)
        if data.size != _STATE.itemsize:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE.itemsize} but found the "
                               f"input RNG state size to be {data.size}")
        record = data.view(_STATE)[0]
        left, nxt, seeded = int(record["left"]), int(record["next"]), int(record["seeded"])
        if not (seeded and 0 < left <= _N and nxt <= _N):
            raise RuntimeError("Invalid mt19937 state")
        if left != 1 and left + nxt != _N + 1:
            raise RuntimeError(f"gradwalk can load an mt19937 state only where left + next = {_N + 1} "
                               f"(as every state PyTorch reaches by drawing), not left={left}, next={nxt}")
        key = (record["state"] & 0xFFFFFFFF).astype(np.uint32)
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": _N if left == 1 else nxt}}
        self._fresh_next = nxt if left == 1 else None
        self._seed = int(record["the_initial_seed"])
        self._next_double_normal = float(record["normal_y"]) if record["normal_is_valid"] else None
        self._next_float_normal = (float(record["next_float_normal_sample"])
                                   if record["is_next_float_normal_sample_valid"] else None)
        return self

    # --- draws (ATen's CPUGeneratorImpl::random / random64), as arrays ------------------------

    def _random(self, n):
        """``n`` draws of ``random()``: 32-bit words, in order. Many at once come from the compiled
        mt19937 of ``gradwalk._random_fast`` (when numba is on), run on NumPy's own state."""
        self._fresh_next = None
        fast = _distributions._fast_kernels(n, "words")
        if fast is not None:
            out = np.empty(n, dtype=np.uint32)
            fast.mt19937_fill(self._state_words(), out)
            return out
        return self._numpy.integers(0, 1 << 32, size=n, dtype=np.uint32)

    def _state_words(self):
        """NumPy's ``mt19937_state`` of this generator (``uint32 key[624]; int pos``), as a
        625-word array over its memory: the compiled mt19937 draws from it and leaves it where
        NumPy's next draw goes on."""
        address = self._bits.ctypes.state_address
        view = self._state_view
        if view is None or view.__array_interface__["data"][0] != address:  # (a copied generator: its own)
            import ctypes

            view = self._state_view = np.ctypeslib.as_array((ctypes.c_uint32 * (_N + 1)).from_address(address))
        return view

    def _random64(self, n):
        """``n`` draws of ``random64()``: two words each, the first the high half."""
        words = self._random(2 * n).astype(np.uint64)
        return (words[0::2] << np.uint64(32)) | words[1::2]

    def __repr__(self):
        return f"<torch._C.Generator object at {hex(id(self))}>"


default_generator = Generator()
default_generator.seed()  # PyTorch's default generator starts from a non-deterministic seed


def _resolve(generator):
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a torch.Generator, not {type(generator).__name__}")
    return generator


def manual_seed(seed):
    """Seed the default generator; returns it. ``torch.manual_seed(1.5)`` seeds with ``int(1.5)``."""
    return default_generator.manual_seed(int(seed))


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """Draws inside the block leave the default generator where it was before."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
