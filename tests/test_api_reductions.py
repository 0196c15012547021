"""Products, reductions, statistics and linear algebra that scripts call (issue 12), each run
beside PyTorch: values, dtype, shape, the backward node's name and the gradients."""
import numpy as np
import pytest
import torch

import gradwalk


def _both(*shapes, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    return ([torch.tensor(a, requires_grad=True) for a in arrays],
            [gradwalk.tensor(a, requires_grad=True) for a in arrays])


def _same(f, shapes, dtype="float64", grad=True, seed=0, atol=1e-6):
    """Run ``f(lib, *inputs)`` under both libraries; compare result, node name and gradients."""
    T, G = _both(*shapes, dtype=dtype, seed=seed)
    expected, got = f(torch, *T), f(gradwalk, *G)
    if isinstance(expected, tuple):
        expected, got = expected[0], got[0]
    assert tuple(got.shape) == tuple(expected.shape)
    assert str(got.dtype) == str(expected.dtype)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), atol=atol, equal_nan=True)
    name = expected.grad_fn.name() if expected.grad_fn is not None else None
    assert (got.grad_fn.name() if got.grad_fn is not None else None) == name
    if grad and name is not None:
        w = np.random.default_rng(1).standard_normal(tuple(expected.shape))
        expected.backward(torch.tensor(w, dtype=expected.dtype))
        got.backward(gradwalk.tensor(w, dtype=got.dtype))
        for t, g in zip(T, G):
            if t.grad is None:
                assert g.grad is None
            else:
                np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), atol=atol)
    return got


PRODUCTS = {
    "addmv": (lambda t, a, m, v: t.addmv(a, m, v, beta=0.5, alpha=2), [(3,), (3, 4), (4,)]),
    "addmv broadcast": (lambda t, a, m, v: t.addmv(a, m, v), [(1,), (3, 4), (4,)]),
    "addr": (lambda t, a, u, v: t.addr(a, u, v, alpha=3), [(3, 4), (3,), (4,)]),
    "addr method": (lambda t, a, u, v: a.addr(u, v, beta=2), [(4,), (3,), (4,)]),
    "baddbmm": (lambda t, a, b1, b2: t.baddbmm(a, b1, b2, beta=0.5), [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    "addbmm": (lambda t, a, b1, b2: t.addbmm(a, b1, b2, alpha=2), [(3, 5), (2, 3, 4), (2, 4, 5)]),
    "addmm_": (lambda t, a, m1, m2: (a * 1).addmm_(m1, m2, alpha=2), [(3, 5), (3, 4), (4, 5)]),
    "addmv_": (lambda t, a, m, v: (a * 1).addmv_(m, v), [(3,), (3, 4), (4,)]),
    "addr_": (lambda t, a, u, v: (a * 1).addr_(u, v), [(3, 4), (3,), (4,)]),
    "baddbmm_": (lambda t, a, b1, b2: (a * 1).baddbmm_(b1, b2), [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    "addbmm_": (lambda t, a, b1, b2: (a * 1).addbmm_(b1, b2), [(3, 5), (2, 3, 4), (2, 4, 5)]),
    "vdot": (lambda t, a, b: t.vdot(a, b), [(4,), (4,)]),
    "ger": (lambda t, a, b: a.ger(b), [(4,), (3,)]),
    "inner": (lambda t, a, b: t.inner(a, b), [(2, 4), (3, 4)]),
    "inner of a number": (lambda t, a, b: t.inner(a, b), [(), (4,)]),
    "tensordot dims lists": (lambda t, a, b: t.tensordot(a, b, dims=([1, 0], [0, 2])), [(3, 4, 5), (4, 2, 3)]),
    "tensordot int": (lambda t, a, b: t.tensordot(a, b), [(3, 4, 5), (4, 5, 2)]),
    "kron": (lambda t, a, b: t.kron(a, b), [(2, 3), (4, 2)]),
    "kron of ranks 1 and 3": (lambda t, a, b: a.kron(b), [(3,), (2, 2, 2)]),
}


@pytest.mark.parametrize("case", PRODUCTS)
def test_products_match_pytorch(case):
    f, shapes = PRODUCTS[case]
    _same(f, shapes)


def test_a_float32_addmv_stays_float32():
    _same(lambda t, a, m, v: t.addmv(a, m, v), [(3,), (3, 4), (4,)], dtype="float32", atol=1e-5)


def _message(f):
    with pytest.raises(Exception) as caught:
        f()
    return type(caught.value), str(caught.value)


@pytest.mark.parametrize("call", [
    lambda t: t.addmv(t.ones(3), t.ones(3, 3), t.ones(2)),
    lambda t: t.addr(t.ones(3, 3), t.ones(3, 3), t.ones(3)),
    lambda t: t.baddbmm(t.ones(2, 3, 3), t.ones(2, 3, 3), t.ones(2, 4, 3)),
    lambda t: t.addbmm(t.ones(3, 3), t.ones(2, 3, 3), t.ones(3, 3, 3)),
    lambda t: t.vdot(t.ones(3), t.ones(2)),
    lambda t: t.tensordot(t.ones(3, 3), t.ones(4, 3), ([0], [0])),
    lambda t: t.tensordot(t.ones(3, 3), t.ones(3, 3), ([0], [0, 1])),
    lambda t: t.inner(t.ones(3, 3), t.ones(2, 2)),
    lambda t: t.ones(3, 3).addmm_(t.ones(2, 3), t.ones(3, 3)),
])
def test_product_errors_match_pytorch(call):
    assert _message(lambda: call(gradwalk)) == _message(lambda: call(torch))


def _with_nan(t, x):
    mask = t.zeros(4, 5, dtype=t.bool)
    mask[0, 0] = mask[2, 2] = mask[2, 4] = True
    return x.masked_fill(mask, float("nan"))


REDUCTIONS = {
    "nansum": lambda t, x: _with_nan(t, x).nansum(),
    "nansum over a dim": lambda t, x: t.nansum(_with_nan(t, x), 1, keepdim=True),
    "nanmean": lambda t, x: _with_nan(t, x).nanmean(0),
    "nanmedian": lambda t, x: _with_nan(t, x).nanmedian(),
    "nanmedian over a dim": lambda t, x: _with_nan(t, x).nanmedian(1),
    "quantile": lambda t, x: t.quantile(x, 0.3),
    "quantile of a row with nan": lambda t, x: _with_nan(t, x).quantile(0.4, dim=1),
    "nanquantile": lambda t, x: _with_nan(t, x).nanquantile(0.4, dim=1),
    "kthvalue": lambda t, x: x.kthvalue(2, 0),
    "kthvalue keepdim": lambda t, x: t.kthvalue(x, 3, keepdim=True),
    "mode": lambda t, x: (x * 2).round().mode(),
    "aminmax": lambda t, x: t.aminmax(x).min + t.aminmax(x).max * 2,
    "aminmax over a dim": lambda t, x: t.aminmax(x, dim=1)[1],
    "msort": lambda t, x: t.msort(x),
    "cov": lambda t, x: t.cov(x),
    "cov of one variable": lambda t, x: t.cov(x[0]),
    "cov with weights": lambda t, x: t.cov(x, correction=0, fweights=t.tensor([1, 2, 1, 3, 1]),
                                           aweights=t.tensor([0.5, 1, 2, 1, 1], dtype=t.float64)),
    "corrcoef": lambda t, x: t.corrcoef(x),
    "trapezoid": lambda t, x: t.trapezoid(x),
    "trapezoid dx": lambda t, x: t.trapezoid(x, dx=0.5, dim=0),
    "trapz x": lambda t, x: t.trapz(x, t.linspace(0, 2, 5, dtype=t.float64) ** 2),
    "cumulative_trapezoid": lambda t, x: t.cumulative_trapezoid(x),
    "cumulative_trapezoid x": lambda t, x: t.cumulative_trapezoid(x, t.linspace(0, 2, 5, dtype=t.float64) ** 2),
    "renorm": lambda t, x: t.renorm(x, 2, 0, 1.5),
    "renorm p=1": lambda t, x: x.renorm(1, 1, 2.0),
    "renorm_": lambda t, x: (x * 1).renorm_(3, 1, 1.0),
    "var correction": lambda t, x: x.var(1, correction=2),
    "std correction": lambda t, x: x.std(correction=0),
}


@pytest.mark.parametrize("case", REDUCTIONS)
def test_reductions_match_pytorch(case):
    _same(REDUCTIONS[case], [(4, 5)])


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_interpolations_match_pytorch(interpolation):
    _same(lambda t, x: x.quantile(t.tensor([0.2, 0.9], dtype=t.float64), dim=0, keepdim=True,
                                  interpolation=interpolation), [(4, 5)])
    _same(lambda t, x: _with_nan(t, x).nanquantile(0.4, interpolation=interpolation), [(4, 5)])


_SAMPLES = np.random.default_rng(0).standard_normal(50)

COUNTS = {
    "histc": lambda t: t.histc(t.tensor(_SAMPLES), bins=7),
    "histc float32 with a range": lambda t: t.histc(t.tensor(_SAMPLES, dtype=t.float32), 5, min=-1, max=1),
    "bincount": lambda t: t.bincount(t.tensor([0, 3, 3, 1])),
    "bincount weights minlength": lambda t: t.tensor([0, 3, 3, 1]).bincount(t.tensor([.5, 1, 2, 3]), minlength=6),
    "bincount float32 weights": lambda t: t.bincount(t.tensor([0, 3]), t.tensor([1., 2], dtype=t.float32)),
    "bucketize": lambda t: t.bucketize(t.tensor([0.5, 1, 2.5]), t.tensor([1., 2, 3])),
    "bucketize right int32": lambda t: t.bucketize(t.tensor([0.5, 1, 2.5]), t.tensor([1., 2, 3]), right=True,
                                                   out_int32=True),
    "searchsorted rows": lambda t: t.searchsorted(t.tensor([[1., 2, 3], [2, 4, 6]]), t.tensor([[2.], [5]]),
                                                  side="right"),
    "searchsorted sorter": lambda t: t.searchsorted(t.tensor([3., 1, 2]), t.tensor([2.5]),
                                                    sorter=t.tensor([1, 2, 0])),
    "searchsorted a number": lambda t: t.searchsorted(t.tensor([1., 2, 3]), 2),
    "isin": lambda t: t.isin(t.tensor([1, 2, 3, 4]), t.tensor([2, 4])),
    "isin invert": lambda t: t.isin(t.tensor([1, 2, 3]), 2, invert=True),
    "nansum of ints": lambda t: t.tensor([1, 2, 3]).nansum(),
}


@pytest.mark.parametrize("case", COUNTS)
def test_counting_and_searching_match_pytorch(case):
    expected, got = COUNTS[case](torch), COUNTS[case](gradwalk)
    assert str(got.dtype) == str(expected.dtype) and tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("call", [
    lambda t: t.kthvalue(t.ones(2, 5), 6),
    lambda t: t.nanmean(t.arange(3)),
    lambda t: t.histc(t.arange(3), 3),
    lambda t: t.bincount(t.tensor([-1, 2])),
    lambda t: t.bincount(t.tensor([1, 2]), t.ones(3)),
    lambda t: t.searchsorted(t.tensor([1., 2]), t.tensor([1.]), right=True, side="left"),
    lambda t: t.quantile(t.ones(3), 1.5),
    lambda t: t.quantile(t.ones(3), 0.5, interpolation="foo"),
    lambda t: t.quantile(t.arange(3), 0.5),
    lambda t: t.cov(t.ones(2, 2, 2)),
    lambda t: t.renorm(t.ones(2, 2), -1, 0, 1.),
    lambda t: t.aminmax(t.ones(0)),
    lambda t: t.trapezoid(t.ones(2, 2), dim=2),
])
def test_reduction_errors_match_pytorch(call):
    assert _message(lambda: call(gradwalk)) == _message(lambda: call(torch))


def _spd(t, a):
    return a @ a.mT + 3 * t.eye(a.shape[-1], dtype=a.dtype)


def _lower(t, a):
    return a.tril() + 3 * t.eye(a.shape[-1], dtype=a.dtype)


LINALG = {
    "det": (lambda t, a: t.det(a), [(3, 3)]),
    "det of a batch": (lambda t, a: a.det(), [(2, 3, 3)]),
    "linalg.det": (lambda t, a: t.linalg.det(a), [(3, 3)]),
    "logdet": (lambda t, a: _spd(t, a).logdet(), [(3, 3)]),
    "logdet of a negative determinant": (lambda t, a: t.logdet(a), [(3, 3)]),
    "matrix_power 0": (lambda t, a: t.matrix_power(a, 0), [(3, 3)]),
    "matrix_power 1": (lambda t, a: t.matrix_power(a, 1), [(3, 3)]),
    "matrix_power 5": (lambda t, a: a.matrix_power(5), [(3, 3)]),
    "matrix_power -2": (lambda t, a: t.linalg.matrix_power(a, -2), [(3, 3)]),
    "matrix_exp": (lambda t, a: t.matrix_exp(a), [(3, 3)]),
    "matrix_exp of a large batch": (lambda t, a: t.linalg.matrix_exp(a * 4), [(2, 4, 4)]),
    "pinverse": (lambda t, a: t.pinverse(a), [(3, 3)]),
    "pinv wide": (lambda t, a: t.linalg.pinv(a), [(3, 5)]),
    "pinv tall": (lambda t, a: t.linalg.pinv(a), [(5, 3)]),
    "cholesky": (lambda t, a: t.cholesky(_spd(t, a)), [(3, 3)]),
    "cholesky upper": (lambda t, a: _spd(t, a).cholesky(upper=True), [(3, 3)]),
    "linalg.cholesky": (lambda t, a: t.linalg.cholesky(_spd(t, a)), [(2, 3, 3)]),
    "cholesky_ex": (lambda t, a: t.linalg.cholesky_ex(_spd(t, a)).L, [(3, 3)]),
    "cholesky_solve": (lambda t, b, a: t.cholesky_solve(b, t.linalg.cholesky(_spd(t, a))), [(3, 2), (3, 3)]),
    "cholesky_solve upper": (lambda t, b, a: b.cholesky_solve(t.linalg.cholesky(_spd(t, a)).mT, upper=True),
                             [(3, 2), (3, 3)]),
    "cholesky_inverse": (lambda t, a: t.cholesky_inverse(_lower(t, a)), [(3, 3)]),
    "solve": (lambda t, a, b: t.linalg.solve(a, b), [(3, 3), (3, 2)]),
    "solve a vector": (lambda t, a, b: t.linalg.solve(a, b), [(3, 3), (3,)]),
    "solve on the right": (lambda t, a, b: t.linalg.solve(a, b, left=False), [(3, 3), (2, 3)]),
    "solve a broadcast batch": (lambda t, a, b: t.linalg.solve(a, b), [(2, 3, 3), (3, 2)]),
    "solve_triangular": (lambda t, a, b: t.linalg.solve_triangular(_lower(t, a), b, upper=False), [(3, 3), (3, 2)]),
    "solve_triangular upper right": (lambda t, a, b: t.linalg.solve_triangular(_lower(t, a).mT, b, upper=True,
                                                                               left=False), [(3, 3), (2, 3)]),
    "solve_triangular unitriangular": (lambda t, a, b: t.linalg.solve_triangular(a, b, upper=True,
                                                                                 unitriangular=True),
                                       [(3, 3), (3, 2)]),
    "triangular_solve": (lambda t, b, a: t.triangular_solve(b, _lower(t, a).mT), [(3, 2), (3, 3)]),
    "triangular_solve transposed": (lambda t, b, a: b.triangular_solve(_lower(t, a), upper=False, transpose=True),
                                    [(3, 2), (3, 3)]),
    "triangular_solve's coefficient": (lambda t, b, a: t.triangular_solve(b, _lower(t, a))[1], [(3, 2), (3, 3)]),
    "qr Q": (lambda t, a: t.linalg.qr(a)[0], [(5, 3)]),
    "qr R": (lambda t, a: t.linalg.qr(a).R, [(5, 3)]),
    "qr both": (lambda t, a: (lambda qr: qr.Q.sum() + qr.R.sum() * 2)(t.linalg.qr(a)), [(4, 4)]),
    "torch.qr": (lambda t, a: t.qr(a)[0], [(4, 3)]),
    "eigh eigenvalues": (lambda t, a: t.linalg.eigh(a + a.mT)[0], [(4, 4)]),
    "eigh eigenvectors": (lambda t, a: t.linalg.eigh(a + a.mT)[1].abs(), [(4, 4)]),
    "eigvalsh": (lambda t, a: t.linalg.eigvalsh(a + a.mT), [(2, 4, 4)]),
    "svdvals": (lambda t, a: t.linalg.svdvals(a), [(4, 3)]),
    "svd S": (lambda t, a: t.linalg.svd(a, full_matrices=False)[1], [(4, 3)]),
    "svd U": (lambda t, a: t.linalg.svd(a, full_matrices=False)[0].abs(), [(4, 3)]),
    "svd Vh wide": (lambda t, a: t.linalg.svd(a, full_matrices=False).Vh.abs(), [(3, 5)]),
    "torch.svd": (lambda t, a: t.svd(a)[2].abs(), [(4, 3)]),
    "multi_dot": (lambda t, a, b, c: t.linalg.multi_dot([a, b, c]), [(3,), (3, 4), (4, 2)]),
    "vecdot": (lambda t, a, b: t.linalg.vecdot(a, b), [(3, 4), (3, 4)]),
    "vander": (lambda t, a: t.linalg.vander(a), [(4,)]),
    "cond": (lambda t, a: t.linalg.cond(a), [(3, 3)]),
    "linalg.diagonal": (lambda t, a: t.linalg.diagonal(a, offset=1), [(3, 4)]),
    "linalg.cross": (lambda t, a, b: t.linalg.cross(a, b), [(4, 3), (4, 3)]),
    "inv_ex": (lambda t, a: t.linalg.inv_ex(a).inverse, [(3, 3)]),
    "tensorsolve": (lambda t, a, b: t.linalg.tensorsolve(a.reshape(2, 3, 6), b), [(6, 6), (2, 3)]),
    "lstsq": (lambda t, a, b: t.linalg.lstsq(a, b).solution, [(5, 3), (5, 2)]),
    "linalg.matmul": (lambda t, a, b: t.linalg.matmul(a, b), [(5, 3), (3, 2)]),
}


@pytest.mark.filterwarnings("ignore:torch.(cholesky|qr|svd|triangular_solve)")
@pytest.mark.parametrize("case", LINALG)
def test_linear_algebra_matches_pytorch(case):
    f, shapes = LINALG[case]
    _same(f, shapes)


def test_matrix_rank_and_tensorinv_match_pytorch():
    for t in (torch, gradwalk):
        assert t.linalg.matrix_rank(t.ones(3, 3)).item() == 1
    a = np.random.default_rng(0).standard_normal((8, 8))
    np.testing.assert_allclose(gradwalk.linalg.tensorinv(gradwalk.tensor(a).reshape(4, 2, 2, 4)).numpy(),
                               torch.linalg.tensorinv(torch.tensor(a).reshape(4, 2, 2, 4)).numpy())


def test_a_singular_matrix_raises_linalg_error_as_pytorch():
    with pytest.raises(gradwalk.linalg.LinAlgError) as caught:
        gradwalk.linalg.solve(gradwalk.ones(3, 3), gradwalk.ones(3))
    assert str(caught.value) == "torch.linalg.solve: The solver failed because the input matrix is singular."
    assert isinstance(caught.value, RuntimeError)


@pytest.mark.parametrize("call", [
    lambda t: t.det(t.ones(2, 3)),
    lambda t: t.linalg.det(t.ones(3)),
    lambda t: t.det(t.ones(3, 3, dtype=t.int64)),
    lambda t: t.linalg.cholesky(t.tensor([[1., 2], [2, 1]])),
    lambda t: t.linalg.solve(t.eye(3), t.ones(2)),
    lambda t: t.matrix_power(t.ones(2, 3), 2),
    lambda t: t.linalg.solve_triangular(t.eye(3), t.ones(2, 2), upper=True),
    lambda t: t.linalg.qr(t.ones(3, 3), mode="x"),
    lambda t: t.linalg.eigh(t.ones(2, 3)),
    lambda t: t.linalg.svd(t.ones(3)),
    lambda t: t.linalg.multi_dot([t.ones(3)]),
    lambda t: t.linalg.cross(t.ones(2, 4), t.ones(2, 4)),
])
def test_linear_algebra_errors_match_pytorch(call):
    got, expected = _message(lambda: call(gradwalk)), _message(lambda: call(torch))
    assert got[1] == expected[1] and issubclass(got[0], RuntimeError)


def test_double_backward_through_det_and_cholesky_matches_pytorch():
    a = np.random.default_rng(2).standard_normal((3, 3))
    results = []
    for t in (torch, gradwalk):
        x = t.tensor(a, requires_grad=True)
        y = t.linalg.cholesky(_spd(t, x)).sum() + t.det(x)
        (g,) = t.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
        results.append(x.grad.numpy())
    np.testing.assert_allclose(results[1], results[0], atol=1e-8)


LU = {
    "lu_factor": (lambda t, a: t.linalg.lu_factor(a).LU, [(4, 4)]),
    "lu_factor_ex of a batch": (lambda t, a: t.linalg.lu_factor_ex(a)[0], [(2, 4, 4)]),
    "torch.lu": (lambda t, a: t.lu(a)[0], [(4, 4)]),
    "linalg.lu L": (lambda t, a: t.linalg.lu(a).L, [(4, 4)]),
    "linalg.lu U": (lambda t, a: t.linalg.lu(a)[2], [(2, 4, 4)]),
    "linalg.lu P": (lambda t, a: t.linalg.lu(a)[0], [(4, 4)]),
    "lu_unpack": (lambda t, a: (lambda f: t.lu_unpack(*f)[1] + t.lu_unpack(*f)[2])(t.linalg.lu_factor(a)), [(4, 4)]),
    "linalg.lu_solve": (lambda t, a, b: t.linalg.lu_solve(*t.linalg.lu_factor(a), b), [(4, 4), (4, 2)]),
    "lu_solve adjoint": (lambda t, a, b: t.linalg.lu_solve(*t.linalg.lu_factor(a.detach()), b, adjoint=True),
                         [(4, 4), (4, 2)]),
    "torch.lu_solve": (lambda t, a, b: t.lu_solve(b, *t.lu(a)), [(4, 4), (4, 2)]),
    "Tensor.lu_solve": (lambda t, a, b: b.lu_solve(*a.lu()), [(4, 4), (4, 2)]),
}


@pytest.mark.filterwarnings("ignore:torch.lu")
@pytest.mark.parametrize("case", LU)
def test_lu_family_matches_pytorch(case):
    f, shapes = LU[case]
    _same(f, shapes)


def test_lu_pivots_are_lapacks():
    a = np.random.default_rng(0).standard_normal((4, 4))
    expected = torch.linalg.lu_factor(torch.tensor(a)).pivots
    got = gradwalk.linalg.lu_factor(gradwalk.tensor(a)).pivots
    assert str(got.dtype) == "torch.int32"
    assert got.tolist() == expected.tolist()


DISTANCES_AND_NORMS = {
    "cdist": (lambda t, a, b: t.cdist(a, b), [(4, 3), (5, 3)]),
    "cdist p=1": (lambda t, a, b: t.cdist(a, b, p=1), [(4, 3), (5, 3)]),
    "cdist p=3 batched": (lambda t, a, b: t.cdist(a, b, p=3), [(2, 4, 3), (2, 5, 3)]),
    "cdist p=inf": (lambda t, a, b: t.cdist(a, b, p=float("inf")), [(4, 3), (5, 3)]),
    "cdist through mm (more than 25 rows)": (lambda t, a, b: t.cdist(a, b), [(30, 3), (5, 3)]),
    "cdist use_mm_for_euclid_dist": (lambda t, a, b: t.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
                                     [(2, 4, 3), (2, 5, 3)]),
    "pdist": (lambda t, a: t.pdist(a), [(5, 3)]),
    "pdist p=1": (lambda t, a: t.pdist(a, p=1), [(5, 3)]),
    "matrix_norm nuc": (lambda t, a: t.linalg.matrix_norm(a, "nuc"), [(4, 3)]),
    "matrix_norm 2 keepdim": (lambda t, a: t.linalg.matrix_norm(a, 2, dim=(0, 2), keepdim=True), [(4, 2, 3)]),
    "matrix_norm -2": (lambda t, a: t.linalg.matrix_norm(a, -2), [(4, 3)]),
    "matrix_norm 1": (lambda t, a: t.linalg.matrix_norm(a, 1), [(4, 3)]),
    "matrix_norm -inf keepdim": (lambda t, a: t.linalg.matrix_norm(a, -float("inf"), dim=(0, 2), keepdim=True),
                                 [(4, 2, 3)]),
    "linalg.norm inf": (lambda t, a: t.linalg.norm(a, float("inf")), [(4, 3)]),
    "nuclear_norm": (lambda t, a: t.nuclear_norm(a), [(4, 3)]),
}


@pytest.mark.filterwarnings("ignore:at::nuclear_norm")
@pytest.mark.parametrize("case", DISTANCES_AND_NORMS)
def test_distances_and_matrix_norms_match_pytorch(case):
    f, shapes = DISTANCES_AND_NORMS[case]
    _same(f, shapes)


@pytest.mark.parametrize("call", [
    lambda t: t.cdist(t.ones(3), t.ones(3)),
    lambda t: t.cdist(t.ones(2, 3), t.ones(2, 4)),
    lambda t: t.cdist(t.ones(2, 3), t.ones(2, 3), p=-1),
    lambda t: t.pdist(t.ones(2, 3, 3)),
])
def test_distance_errors_match_pytorch(call):
    assert _message(lambda: call(gradwalk)) == _message(lambda: call(torch))
