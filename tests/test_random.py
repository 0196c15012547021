"""Same seed, same numbers: gradwalk's random draws beside PyTorch 2.13's, bit for bit.

Each test seeds both libraries, draws the same things in the same order and compares the bits.
Float64 values that go through glibc's log/log1p/exp/tan are counted (``ULP_COUNTS``: none may
differ) and the session prints the counts at the end.
"""
import itertools

import numpy as np
import pytest
import torch

import gradwalk
from gradwalk import _distributions as D
from gradwalk.random import _init_genrand

SEEDS = [0, 1, 42, 2147483647, 2**40 + 3, -1]
SIZES = [1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 100, 255, 1001]
ULP_COUNTS = {}  # test name -> (elements off by one ulp, elements compared)


def both(seed):
    gradwalk.manual_seed(seed)
    torch.manual_seed(seed)


def same(ours, theirs):
    a = ours.numpy() if hasattr(ours, "numpy") else np.asarray(ours)
    b = theirs.numpy() if hasattr(theirs, "numpy") else np.asarray(theirs)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def same_on_both(draw):
    """``draw(lib)`` with gradwalk, then with torch: the same bits."""
    same(draw(gradwalk), draw(torch))


def counted_same(name, ours, theirs):
    """The same bits, counted: how many float64 values went through glibc's functions."""
    a, b = ours.numpy(), theirs.numpy()
    assert a.shape == b.shape
    off = int((a.view(np.int64) != b.view(np.int64)).sum())
    done, total = ULP_COUNTS.get(name, (0, 0))
    ULP_COUNTS[name] = (done + off, total + a.size)
    assert off == 0, f"{name}: {off} of {a.size} values differ from PyTorch's"


@pytest.fixture(scope="module", autouse=True)
def report_ulps():
    yield
    for name, (off, total) in sorted(ULP_COUNTS.items()):
        print(f"\n{name}: {off} of {total} float64 values off PyTorch's")


# --- the generator ----------------------------------------------------------------------------

def test_seeding_is_mt19937_init_genrand():
    key = np.random.MT19937(0)
    key._legacy_seeding(12345)
    np.testing.assert_array_equal(key.state["state"]["key"], _init_genrand(12345))


@pytest.mark.parametrize("seed", SEEDS)
def test_a_fresh_state_is_pytorchs_byte_for_byte(seed):
    both(seed)
    same(gradwalk.get_rng_state(), torch.get_rng_state())
    assert gradwalk.initial_seed() == torch.initial_seed()
    assert gradwalk.Generator().manual_seed(seed).initial_seed() == torch.Generator().manual_seed(seed).initial_seed()


def test_a_new_generator_starts_from_pytorchs_default_seed():
    same(gradwalk.Generator().get_state(), torch.Generator().get_state())
    same(gradwalk.rand(4, generator=gradwalk.Generator()), torch.rand(4, generator=torch.Generator()))


def test_state_after_draws_and_with_a_cached_normal_is_pytorchs():
    both(7)
    gradwalk.randn(3)  # three one-at-a-time normals: the fourth waits in the generator
    torch.randn(3)
    same(gradwalk.get_rng_state(), torch.get_rng_state())
    for _ in range(3):  # past a twist of the 624 words
        gradwalk.rand(300)
        torch.rand(300)
        same(gradwalk.get_rng_state(), torch.get_rng_state())


def test_states_load_across_the_libraries():
    torch.manual_seed(3)
    torch.randn(5)
    saved = torch.get_rng_state()
    gradwalk.set_rng_state(gradwalk.tensor(saved.numpy(), dtype=gradwalk.uint8))
    same(gradwalk.randn(40), torch.randn(40))
    g = gradwalk.Generator().manual_seed(9)
    gradwalk.randn(1, generator=g)
    t = torch.Generator().set_state(torch.from_numpy(g.get_state().numpy()))
    same(gradwalk.randn(9, generator=g), torch.randn(9, generator=t))


def test_bad_seeds_and_states_fail_as_in_pytorch():
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        gradwalk.manual_seed(2**64)
    with pytest.raises(RuntimeError, match="manual_seed expected a long, but got float"):
        gradwalk.Generator().manual_seed(1.5)
    with pytest.raises(RuntimeError, match="Expected a CPUGeneratorImplState of size 5056 but found the input RNG "
                                           "state size to be 10"):
        gradwalk.set_rng_state(gradwalk.zeros(10, dtype=gradwalk.uint8))
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        gradwalk.set_rng_state(gradwalk.zeros(5056))
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        gradwalk.set_rng_state(gradwalk.zeros(5056, dtype=gradwalk.uint8))


def test_fork_rng_puts_the_state_back():
    both(11)
    with gradwalk.random.fork_rng():
        gradwalk.randn(100)
    same(gradwalk.rand(5), torch.rand(5))


def test_seed_is_random_and_reported():
    s = gradwalk.seed()
    assert gradwalk.initial_seed() == s
    assert gradwalk.Generator().seed() != gradwalk.Generator().seed()


# --- draws ------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rand_and_uniform(seed, dtype):
    both(seed)
    for n in SIZES:
        same(gradwalk.rand(n, dtype=getattr(gradwalk, dtype)), torch.rand(n, dtype=getattr(torch, dtype)))
        same(gradwalk.empty(n, dtype=getattr(gradwalk, dtype)).uniform_(-0.1234567, 0.98765),
             torch.empty(n, dtype=getattr(torch, dtype)).uniform_(-0.1234567, 0.98765))


@pytest.mark.parametrize("seed", SEEDS)
def test_randn_float32_on_both_sides_of_16(seed):
    both(seed)
    for n in SIZES + [4096, 40003]:
        same(gradwalk.randn(n), torch.randn(n))
        same(gradwalk.empty(n).normal_(0.3, 0.0123), torch.empty(n).normal_(0.3, 0.0123))


@pytest.mark.parametrize("seed", SEEDS)
def test_randn_float64(seed):
    both(seed)
    for n in SIZES:
        counted_same("randn float64", gradwalk.randn(n, dtype=gradwalk.float64), torch.randn(n, dtype=torch.float64))
    same(gradwalk.rand(3), torch.rand(3))  # still in step


def test_normals_into_non_contiguous_tensors_go_one_at_a_time_in_storage_order():
    both(5)
    for shape in [(4, 8), (16, 5), (3, 7, 2)]:
        ours = gradwalk.empty(*shape).transpose(0, -1)
        theirs = torch.empty(*shape).transpose(0, -1)
        same(ours.normal_(), theirs.normal_())
        same(ours.uniform_(), theirs.uniform_())
        same(gradwalk.empty(*shape)[:, ::2].normal_(1.0, 2.0), torch.empty(*shape)[:, ::2].normal_(1.0, 2.0))


def test_normal_with_tensor_and_number_arguments():
    both(2)
    m, s = [0.5, -1.0, 2.0] * 7, [1.0, 0.1, 3.0] * 7
    same(gradwalk.normal(gradwalk.tensor(m), gradwalk.tensor(s)), torch.normal(torch.tensor(m), torch.tensor(s)))
    same(gradwalk.normal(gradwalk.tensor(m), 0.5), torch.normal(torch.tensor(m), 0.5))
    same(gradwalk.normal(0.5, gradwalk.tensor(s)), torch.normal(0.5, torch.tensor(s)))
    same(gradwalk.normal(2.0, 3.0, (5, 4)), torch.normal(2.0, 3.0, (5, 4)))
    same_on_both(lambda lib: lib.normal(lib.tensor(m[:3]), lib.tensor(s[:3])))


@pytest.mark.parametrize("seed", SEEDS)
def test_randint_and_random_(seed):
    both(seed)
    for n in SIZES:
        same(gradwalk.randint(-3, 10, (n,)), torch.randint(-3, 10, (n,)))
        same(gradwalk.randint(10, (n, 2)), torch.randint(10, (n, 2)))
        for high in (2**28 - 1, 2**28, 2**31 - 1, 2**40, 2**62):  # PyTorch 2.13 switches to 64-bit draws at 2**28
            same(gradwalk.randint(0, high, (n,)), torch.randint(0, high, (n,)))
        same_on_both(lambda lib: lib.randint(0, 2**31 - 1, (n,), dtype=lib.int32))
        same(gradwalk.randint(0, 100, (n,), dtype=gradwalk.float32), torch.randint(0, 100, (n,), dtype=torch.float32))
        for dtype in ("int64", "int32", "int16", "int8", "uint8", "float32", "float64", "bool"):
            same_on_both(lambda lib: lib.empty(n, dtype=getattr(lib, dtype)).random_())
        same(gradwalk.empty(n, dtype=gradwalk.int64).random_(7), torch.empty(n, dtype=torch.int64).random_(7))


@pytest.mark.filterwarnings("ignore:.*is out of bounds:UserWarning")
def test_randint_into_float_dtypes_moves_the_bounds_as_pytorch():
    """For a float dtype, PyTorch first moves ``from`` and ``to`` inwards to values the dtype
    holds (``update_from``/``update_to``), which changes the range, and so the values."""
    cases = [(0, 2**24 + 1), (0, 2**24 + 3), (0, 2**28 - 1), (0, 2**28), (0, 2**28 + 1), (16, 2**28 + 16),
             (-16, 2**28), (-(2**24) - 3, 5), (-(2**40) - 7, 2**31 - 1), (5, 2**40 + 5), (0, 2**53 + 3),
             (-(2**62), 2**62 + 1), (0, 2**63 - 1), (-3, 2**11 + 1), (-3, 2**11 + 3)]
    for dtype in ("float32", "float64", "float16"):
        for low, high in cases:
            if dtype == "float16" and not -65504 <= low < high <= 65504:
                continue
            both(1)
            same_on_both(lambda lib: lib.randint(low, high, (33,), dtype=getattr(lib, dtype)))
            same(gradwalk.rand(2), torch.rand(2))  # as many words drawn


def test_randint_bounds_outside_the_dtype_fail_or_warn_as_in_pytorch():
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for c10::Half"):
        gradwalk.randint(0, 100000, (2,), dtype=gradwalk.float16)
    with pytest.raises(RuntimeError, match="from is out of bounds for signed char"):
        gradwalk.randint(-1000, 1, (2,), dtype=gradwalk.int8)
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for int"):
        gradwalk.randint(0, 2**40, (2,), dtype=gradwalk.int32)
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for bool"):
        gradwalk.empty(3, dtype=gradwalk.bool).random_(0, 3)
    with pytest.warns(UserWarning, match=r"to - 1 is out of bounds \[-\(2\^24\), 2\^24\]. Due to precision "
                                          r"limitations float can support"):
        gradwalk.randint(0, 2**24 + 2, (2,), dtype=gradwalk.float32)


def test_like_factories():
    both(4)
    x = gradwalk.empty(5, 3)
    y = torch.empty(5, 3)
    same(gradwalk.rand_like(x), torch.rand_like(y))
    same(gradwalk.randn_like(x), torch.randn_like(y))
    same(gradwalk.randint_like(x, 3, 9), torch.randint_like(y, 3, 9))
    same(gradwalk.randn_like(x, dtype=gradwalk.float64).float(), torch.randn_like(y, dtype=torch.float64).float())


@pytest.mark.parametrize("seed", SEEDS)
def test_randperm(seed):
    both(seed)
    for n in [0, 1, 2, 3, 10, 100, 1000, 12345, 300_001]:
        same(gradwalk.randperm(n), torch.randperm(n))
    same(gradwalk.randperm(50, dtype=gradwalk.int32), torch.randperm(50, dtype=torch.int32))
    g, t = gradwalk.Generator().manual_seed(seed & 0xFFFF), torch.Generator().manual_seed(seed & 0xFFFF)
    same(gradwalk.randperm(777, generator=g), torch.randperm(777, generator=t))


def test_randperm_matches_the_swaps_run_one_by_one():
    rng = np.random.default_rng(0)
    for n in [2, 3, 5, 8, 50, 1000]:
        for _ in range(20):
            target = np.arange(n - 1) + rng.integers(0, np.arange(n, 1, -1))
            a = np.arange(n)
            for i, t in enumerate(target):
                a[i], a[t] = a[t], a[i]
            np.testing.assert_array_equal(D._swaps_result(n, target.astype(np.int64)), a)


def test_randperm_inside_out_variant_matches_the_loop():
    rng = np.random.default_rng(1)
    for n in [1, 2, 3, 7, 100]:
        for _ in range(20):
            z = rng.integers(0, np.arange(1, n + 1))
            r = np.zeros(n, dtype=np.int64)
            for i in range(n):
                r[i] = i
                r[i] = r[z[i]]
                r[z[i]] = i
            np.testing.assert_array_equal(D._inside_out_result(n, z.astype(np.int64)), r)


@pytest.mark.parametrize("seed", SEEDS)
def test_bernoulli_scalar_and_tensor_p(seed):
    both(seed)
    for n in SIZES:
        same(gradwalk.empty(n).bernoulli_(0.3), torch.empty(n).bernoulli_(0.3))
        p = np.linspace(0, 1, n).astype(np.float32)
        same(gradwalk.bernoulli(gradwalk.tensor(p)), torch.bernoulli(torch.tensor(p)))
        same_on_both(lambda lib: lib.bernoulli(lib.tensor(p, dtype=lib.float64)))
        same(gradwalk.bernoulli(gradwalk.zeros(n), 0.7), torch.bernoulli(torch.zeros(n), 0.7))


@pytest.mark.parametrize("seed", SEEDS)
def test_exponential_geometric_log_normal_cauchy(seed):
    both(seed)
    for n in SIZES:
        same(gradwalk.empty(n).exponential_(1.5), torch.empty(n).exponential_(1.5))
        same(gradwalk.empty(n).geometric_(0.3), torch.empty(n).geometric_(0.3))
        same(gradwalk.empty(n, dtype=gradwalk.int64).geometric_(0.2), torch.empty(n, dtype=torch.int64).geometric_(0.2))
        same(gradwalk.empty(n).log_normal_(0.5, 0.7), torch.empty(n).log_normal_(0.5, 0.7))
        same(gradwalk.empty(n).cauchy_(0.5, 2.0), torch.empty(n).cauchy_(0.5, 2.0))
        counted_same("exponential float64", gradwalk.empty(n, dtype=gradwalk.float64).exponential_(),
                     torch.empty(n, dtype=torch.float64).exponential_())
        counted_same("log_normal float64", gradwalk.empty(n, dtype=gradwalk.float64).log_normal_(),
                     torch.empty(n, dtype=torch.float64).log_normal_())
        counted_same("cauchy float64", gradwalk.empty(n, dtype=gradwalk.float64).cauchy_(),
                     torch.empty(n, dtype=torch.float64).cauchy_())
    same(gradwalk.rand(2), torch.rand(2))


@pytest.mark.parametrize("seed", range(8))
def test_float64_draws_through_glibc_over_many_values(seed):
    both(1000 + seed)
    for n in (5, 20_000):
        for name, draw in [("exponential float64", lambda lib: lib.empty(n, dtype=lib.float64).exponential_(0.7)),
                           ("log_normal float64", lambda lib: lib.empty(n, dtype=lib.float64).log_normal_(0.3, 1.5)),
                           ("cauchy float64", lambda lib: lib.empty(n, dtype=lib.float64).cauchy_()),
                           ("randn float64", lambda lib: lib.randn(n, dtype=lib.float64)),
                           ("geometric float64", lambda lib: lib.empty(n, dtype=lib.float64).geometric_(0.01))]:
            counted_same(name, draw(gradwalk), draw(torch))


def test_log1p_is_glibcs_on_every_branch():
    import math

    rng = np.random.default_rng(0)
    x = np.concatenate([-rng.integers(0, 2**53, 100_000) * 2.0**-53,  # log1p(-u): the draws' inputs
                        rng.random(20_000) * 0.4142, rng.random(20_000) * 1e6,
                        -rng.integers(0, 2**22, 20_000) * 2.0**-53,  # |x| < 2**-29 and |f| < 2**-20
                        -(1 - rng.integers(1, 2**30, 20_000) * 2.0**-53), np.array([0.0, -0.0, -1.0])])
    theirs = np.array([math.log1p(v) if v != -1 else -np.inf for v in x.tolist()])
    np.testing.assert_array_equal(D.log1p(x), theirs)


def test_a_zero_radius_gives_plus_zero_as_pytorchs_fused_multiply_add(monkeypatch):
    """A uniform of 0 for the radius makes radius * cos a -0 where cos < 0; PyTorch's
    ``fmadd(n, std=1, mean=0)`` turns it into +0 (seed 12: at 411302; seed 34: at 298484 and 298492)."""
    for seed in (12, 34):
        for minimum in (0, 1 << 62):  # the compiled path (when numba is on), the reference path
            for kind in D.FAST_MIN:
                monkeypatch.setitem(D.FAST_MIN, kind, minimum)
            both(seed)
            ours, theirs = gradwalk.randn(10**6), torch.randn(10**6)
            assert (theirs.numpy() == 0).sum() == 2
            same(bits(ours), bits(theirs))


@pytest.mark.parametrize("seed", [0, 3])
def test_randn_float32_a_million_values(seed):
    both(seed)
    same(gradwalk.randn(10**6 + 5), torch.randn(10**6 + 5))
    same(gradwalk.empty(10**6).normal_(-2.0, 0.3), torch.empty(10**6).normal_(-2.0, 0.3))


def test_fast_normal_lanes_are_the_operation_by_operation_emulation():
    """The chunked log and sincos skip the double-rounding checks: on every one of the 2**24 float32
    uniforms none is needed (GRADWALK_EXHAUSTIVE=1 checks them all; by default every 61st)."""
    import os

    step = 1 if os.environ.get("GRADWALK_EXHAUSTIVE") else 61
    k = np.arange(0, 1 << 24, step, dtype=np.int64)
    lanes = D._Lanes(D._FAST_LANES)
    for lo in range(0, k.size, D._FAST_LANES):
        unit = k[lo:lo + D._FAST_LANES].astype(np.float32) * np.float32(2.0 ** -24)
        n = unit.size
        u1 = np.float32(1) - unit
        log = np.empty(n, np.float32)
        D._log256_fast(u1.copy(), lanes, log)
        np.testing.assert_array_equal(log.view(np.int32), D._log256(u1).view(np.int32))
        x = D._TWO_PI_F * unit
        sin, cos = np.empty(n, np.float32), np.empty(n, np.float32)
        D._sincos256_fast(x.copy(), lanes, sin, cos)
        ref_sin, ref_cos = D._sincos256(x)
        np.testing.assert_array_equal(sin.view(np.int32), ref_sin.view(np.int32))
        np.testing.assert_array_equal(cos.view(np.int32), ref_cos.view(np.int32))


@pytest.mark.parametrize("seed", SEEDS)
def test_multinomial(seed):
    both(seed)
    for k in [1, 2, 5, 40]:
        w = np.random.default_rng(k).random((3, k)).astype(np.float32) + 0.01
        for num, repl in [(1, False), (1, True), (k, False), (max(1, k // 2), False), (7, True), (100, True)]:
            if num > k and not repl:
                continue
            same(gradwalk.multinomial(gradwalk.tensor(w), num, repl), torch.multinomial(torch.tensor(w), num, repl))
            same_on_both(lambda lib: lib.multinomial(lib.tensor(w[0]), num, repl))
    same(gradwalk.rand(2), torch.rand(2))


def test_generator_objects_keep_their_own_sequence():
    both(0)
    g, t = gradwalk.Generator().manual_seed(2147483647), torch.Generator().manual_seed(2147483647)
    same(gradwalk.rand(3, generator=g), torch.rand(3, generator=t))
    same(gradwalk.randn(20, generator=g), torch.randn(20, generator=t))
    same(gradwalk.randint(0, 27, (5,), generator=g), torch.randint(0, 27, (5,), generator=t))
    same(gradwalk.multinomial(gradwalk.ones(27), 4, True, generator=g),
         torch.multinomial(torch.ones(27), 4, True, generator=t))
    same(gradwalk.rand(3), torch.rand(3))  # the default generator was not touched


def test_the_sequence_across_a_mix_of_calls():
    both(1234)
    draws = [
        lambda lib: lib.randn(5), lambda lib: lib.rand(17), lambda lib: lib.randn(33),
        lambda lib: lib.randperm(9), lambda lib: lib.randint(0, 5, (3,)), lambda lib: lib.randn(1),
        lambda lib: lib.empty(4).bernoulli_(0.5), lambda lib: lib.multinomial(lib.ones(6), 3),
        lambda lib: lib.empty(3).exponential_(), lambda lib: lib.randn(3, dtype=lib.float64).float(),
        lambda lib: lib.empty(2).log_normal_(), lambda lib: lib.empty(21).normal_(2.0, 0.5),
    ]
    rng = np.random.default_rng(0)
    for i in rng.integers(0, len(draws), 200):
        same(draws[i](gradwalk), draws[i](torch))
        same(gradwalk.get_rng_state(), torch.get_rng_state())


# --- built on the draws -------------------------------------------------------------------------

def params(module):
    return [p.detach().numpy() for p in module.parameters()]


def test_default_initialisation_of_layers():
    for seed in SEEDS[:4]:
        both(seed)
        pairs = [(gradwalk.nn.Linear(5, 3), torch.nn.Linear(5, 3)),
                 (gradwalk.nn.Linear(64, 10, bias=False), torch.nn.Linear(64, 10, bias=False)),
                 (gradwalk.nn.Conv2d(3, 4, 3), torch.nn.Conv2d(3, 4, 3)),
                 (gradwalk.nn.Embedding(10, 4, padding_idx=1), torch.nn.Embedding(10, 4, padding_idx=1)),
                 (gradwalk.nn.Sequential(gradwalk.nn.Linear(2, 8), gradwalk.nn.Tanh(), gradwalk.nn.Linear(8, 1)),
                  torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)))]
        for ours, theirs in pairs:
            for a, b in zip(params(ours), params(theirs), strict=True):
                np.testing.assert_array_equal(a, b)


def test_nn_init():
    both(8)
    cases = [("uniform_", dict(a=-2, b=3)), ("normal_", dict(mean=1, std=0.02)), ("xavier_uniform_", {}),
             ("xavier_normal_", dict(gain=2.0)), ("kaiming_uniform_", dict(a=0.1)),
             ("kaiming_normal_", dict(mode="fan_out", nonlinearity="relu")), ("trunc_normal_", {}),
             ("trunc_normal_", dict(mean=0.0, std=1.0, a=2.0, b=4.0)), ("sparse_", dict(sparsity=0.5))]
    for shape in [(3, 4), (8, 5), (16, 3, 3)]:
        for name, kwargs in cases:
            if name == "sparse_" and len(shape) != 2:
                continue
            a = getattr(gradwalk.nn.init, name)(gradwalk.empty(*shape), **kwargs)
            b = getattr(torch.nn.init, name)(torch.empty(*shape), **kwargs)
            same(a, b)
    a = gradwalk.nn.init.orthogonal_(gradwalk.empty(4, 6))
    b = torch.nn.init.orthogonal_(torch.empty(4, 6))
    np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5)  # the QR is LAPACK's, not MKL's
    same(gradwalk.rand(2), torch.rand(2))


def test_dropout_masks():
    for seed in SEEDS[:3]:
        both(seed)
        for shape in [(5,), (7, 33), (16, 4)]:
            for p in (0.1, 0.5, 0.9):
                same_on_both(lambda lib: lib.nn.functional.dropout(lib.ones(*shape), p))
            same(gradwalk.nn.Dropout(0.2)(gradwalk.ones(*shape).t()), torch.nn.Dropout(0.2)(torch.ones(*shape).t()))


def loader_orders(lib):
    lib.manual_seed(3)
    ds = lib.utils.data.TensorDataset(lib.arange(10))
    out = []
    for gen in [None, lib.Generator().manual_seed(5)]:
        for shuffle in (True, False):
            loader = lib.utils.data.DataLoader(ds, batch_size=4, shuffle=shuffle, generator=gen)
            for _ in range(2):  # two epochs
                out.append([b[0].tolist() for b in loader])
    sampler = lib.utils.data.RandomSampler(range(1000), replacement=True, num_samples=int(1e10))
    out.append(list(itertools.islice(iter(sampler), 70)))  # lazy: never builds 1e10 indices
    out.append(list(lib.utils.data.RandomSampler(range(7), generator=lib.Generator().manual_seed(1))))
    out.append(list(lib.utils.data.RandomSampler(range(7), num_samples=17)))
    out.append([list(s) for s in lib.utils.data.random_split(range(10), [0.3, 0.7])])
    g = lib.Generator().manual_seed(42)
    out.append([list(s) for s in lib.utils.data.random_split(range(10), [3, 7], generator=g)])
    out.append(lib.rand(2).tolist())
    return out


def test_dataloader_samplers_and_random_split():
    assert loader_orders(gradwalk) == loader_orders(torch)


# --- the compiled fast paths (gradwalk._random_fast, numba) -------------------------------------
# Large draws run numba kernels when numba is on; every test above then checks them against
# PyTorch at the sizes that reach them. Here both paths run on the same draws, at every size
# (the size thresholds lowered to 0), and are compared with each other and with PyTorch.

FAST_SIZES = [2, 3, 7, 15, 16, 17, 31, 32, 33, 47, 100, 1001, 4096, 65536 + 17, 2 * 65536, 2 * 65536 + 9]
FAST_DRAWS = [
    ("randn", lambda lib, n: lib.randn(n)),
    ("normal_(0.3, 0.0123)", lambda lib, n: lib.empty(n).normal_(0.3, 0.0123)),
    ("normal_(-2, 3)", lambda lib, n: lib.empty(n).normal_(-2.0, 3.0)),
    ("randn float64", lambda lib, n: lib.randn(n, dtype=lib.float64)),
    ("normal_(2, 0.5) float64", lambda lib, n: lib.empty(n, dtype=lib.float64).normal_(2.0, 0.5)),
    ("exponential_(0.7) float64", lambda lib, n: lib.empty(n, dtype=lib.float64).exponential_(0.7)),
    ("exponential_(1.5)", lambda lib, n: lib.empty(n).exponential_(1.5)),
    ("bernoulli_(0.3)", lambda lib, n: lib.empty(n).bernoulli_(0.3)),
    ("randperm", lambda lib, n: lib.randperm(n)),
    ("rand", lambda lib, n: lib.rand(n)),
    ("uniform_(-0.1234567, 0.98765)", lambda lib, n: lib.empty(n).uniform_(-0.1234567, 0.98765)),
    ("rand float64", lambda lib, n: lib.rand(n, dtype=lib.float64)),
    ("uniform_(-3, 1e5) float64", lambda lib, n: lib.empty(n, dtype=lib.float64).uniform_(-3, 1e5)),
    ("normal_ non-contiguous", lambda lib, n: lib.empty(n, 2).t().normal_()),
    ("normal_(1, 2) float64 non-contiguous", lambda lib, n: lib.empty(n, 2, dtype=lib.float64).t().normal_(1.0, 2.0)),
    ("one at a time, then the cached one",
     lambda lib, n: lib.cat([lib.empty(3, n).t().normal_().reshape(-1), lib.randn(7)])),
    ("log_normal_(0.3, 1.5) float64", lambda lib, n: lib.empty(n, dtype=lib.float64).log_normal_(0.3, 1.5)),
    ("log_normal_", lambda lib, n: lib.empty(n).log_normal_()),
    ("cauchy_ float64", lambda lib, n: lib.empty(n, dtype=lib.float64).cauchy_()),
    ("cauchy_(0.5, 2)", lambda lib, n: lib.empty(n).cauchy_(0.5, 2.0)),
    ("geometric_(0.01) float64", lambda lib, n: lib.empty(n, dtype=lib.float64).geometric_(0.01)),
    ("geometric_(0.2) int64", lambda lib, n: lib.empty(n, dtype=lib.int64).geometric_(0.2)),
    ("multinomial without replacement", lambda lib, n: lib.multinomial(lib.arange(1.0, n + 1), min(n, 50))),
    ("randint(-3, 10)", lambda lib, n: lib.randint(-3, 10, (n,))),
    ("randint(0, 2**31 - 1) int32", lambda lib, n: lib.randint(0, 2**31 - 1, (n,), dtype=lib.int32)),
    ("randint(0, 2**28) float32", lambda lib, n: lib.randint(0, 2**28, (n,), dtype=lib.float32)),
    ("randint(-2**62, 2**62)", lambda lib, n: lib.randint(-2**62, 2**62, (n,))),
    ("random_(-2**63, 2**63 - 1)", lambda lib, n: lib.empty(n, dtype=lib.int64).random_(-2**63, 2**63 - 1)),
]


def numba_or_skip():
    from gradwalk import _fast

    if _fast.numba_njit() is None:
        pytest.skip("numba is off (GRADWALK_NO_NUMBA=1) or not installed: only the reference paths run")


def bits(t):
    a = t.numpy()
    return a.view(np.int64 if a.itemsize == 8 else np.int32) if a.dtype.kind == "f" else a


def on_both_paths(monkeypatch, seed, draw):
    """``draw(gradwalk)`` on the compiled paths (every size), then on the NumPy reference paths
    (no size), then ``draw(torch)``, each from ``seed``; with the generator states after them."""
    results = []
    for minimum in (0, 1 << 62):
        for kind in D.FAST_MIN:
            monkeypatch.setitem(D.FAST_MIN, kind, minimum)
        gradwalk.manual_seed(seed)
        results.append((bits(draw(gradwalk)), gradwalk.get_rng_state().numpy()))
    torch.manual_seed(seed)
    results.append((bits(draw(torch)), torch.get_rng_state().numpy()))
    return results


@pytest.mark.filterwarnings("ignore:.*is out of bounds:UserWarning")
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name, draw", FAST_DRAWS, ids=[name for name, _ in FAST_DRAWS])
def test_compiled_and_reference_paths_give_pytorchs_bits(monkeypatch, seed, name, draw):
    numba_or_skip()
    for n in FAST_SIZES:
        (compiled, state_c), (reference, state_r), (theirs, state_t) = on_both_paths(monkeypatch, seed,
                                                                                      lambda lib: draw(lib, n))
        np.testing.assert_array_equal(compiled, reference, err_msg=f"{name}, n={n}: compiled != reference")
        np.testing.assert_array_equal(compiled, theirs, err_msg=f"{name}, n={n}: compiled != PyTorch")
        np.testing.assert_array_equal(state_c, state_t, err_msg=f"{name}, n={n}: state after the draw")
        np.testing.assert_array_equal(state_r, state_t, err_msg=f"{name}, n={n}: state after the draw")


def test_compiled_normal_lanes_are_the_reference_lanes_on_every_uniform(monkeypatch):
    """Every float32 uniform as a radius's and as an angle's (every 61st unless
    GRADWALK_EXHAUSTIVE=1), through the compiled kernel and the NumPy one."""
    import os

    numba_or_skip()
    from gradwalk import _random_fast

    step = 1 if os.environ.get("GRADWALK_EXHAUSTIVE") else 61
    k = np.arange(0, 1 << 24, step, dtype=np.uint32)
    k = k[:k.size // 8 * 8]
    angles = (k * np.uint32(2654435761)) & np.uint32(0xFFFFFF)  # every angle too, in another order
    words = np.stack([k.reshape(-1, 8), angles.reshape(-1, 8)], axis=1).reshape(-1)
    for mean, std in [(0.0, 1.0), (0.3, 0.0123), (-2.0, 3.0)]:
        mean, std = np.float32(mean), np.float32(std)
        compiled = np.empty(words.size, np.float32)
        _random_fast.normal_rows_float(words, compiled, mean, std)
        reference = np.empty(words.size, np.float32)
        for lo in range(0, words.size, D._FAST_LANES * 2):
            chunk = words[lo:lo + D._FAST_LANES * 2]
            D._normal_rows_fast(chunk.reshape(-1, 2, 8), reference[lo:lo + chunk.size].reshape(-1, 2, 8),
                                D._Lanes(chunk.size // 2), mean, std)
        np.testing.assert_array_equal(compiled.view(np.int32), reference.view(np.int32))


def run_python(code, **env):
    import os
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_numba_stays_out_of_import_and_small_draws_and_GRADWALK_NO_NUMBA_keeps_it_out():
    small = ("import sys, gradwalk; gradwalk.randn(1000); gradwalk.randn(1000, dtype=gradwalk.float64); "
             "gradwalk.randperm(1000); gradwalk.empty(1000).exponential_(); gradwalk.empty(1000).bernoulli_(0.5); "
             "print('numba' in sys.modules, 'gradwalk._random_fast' in sys.modules)")
    assert run_python(small, GRADWALK_NO_NUMBA="") == "False False"
    large = ("import sys, gradwalk; gradwalk.randn(1 << 18); gradwalk.randperm(1 << 16); "
             "print('numba' in sys.modules, 'gradwalk._random_fast' in sys.modules)")
    assert run_python(large, GRADWALK_NO_NUMBA="1") == "False False"


def test_compiled_mt19937_is_numpys_on_its_own_state(monkeypatch):
    """Words from the compiled engine and from NumPy's, interleaved in any lengths (across twists),
    are NumPy's sequence, and leave NumPy's state where NumPy alone would."""
    numba_or_skip()
    rng = np.random.default_rng(5)
    for seed in SEEDS:
        ours, numpys = gradwalk.Generator().manual_seed(seed), np.random.MT19937(0)
        numpys._legacy_seeding(seed & 0xFFFFFFFF)
        plain = np.random.Generator(numpys)
        for n in rng.integers(0, 2000, 30).tolist() + [623, 624, 625, 1248, 100_003]:
            monkeypatch.setitem(D.FAST_MIN, "words", int(rng.integers(0, 2)) * (1 << 62))  # either engine
            np.testing.assert_array_equal(ours._random(n), plain.integers(0, 1 << 32, size=n, dtype=np.uint32))
            state, theirs = ours._bits.state["state"], numpys.state["state"]
            np.testing.assert_array_equal(state["key"], theirs["key"])
            assert state["pos"] == theirs["pos"]


def test_copied_generators_draw_on_their_own_state():
    import copy
    import pickle

    g, t = gradwalk.Generator().manual_seed(1), torch.Generator().manual_seed(1)
    same(gradwalk.randn(10**5, generator=g), torch.randn(10**5, generator=t))  # past the words' threshold
    copies = [copy.deepcopy(g), pickle.loads(pickle.dumps(g))]
    expected = torch.randn(10**5, generator=t)
    for h in copies + [g]:
        same(gradwalk.randn(10**5, generator=h), expected)
