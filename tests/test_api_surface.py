"""The API surface everyday scripts touch, each checked beside PyTorch: devices and the CUDA stub,
the default dtype, ``torch.return_types``, ``torch.testing.assert_close``, ``torch.linalg``
norms and the small Tensor methods (``new_zeros``, ``squeeze_``, ``apply_``...)."""
import re
import textwrap
import warnings

import pytest
import torch

import gradwalk


def _outcome(library, code):
    """Run ``code`` with ``torch`` bound to ``library``; its ``out`` (repr, addresses dropped)
    or the exception it raised (type and message)."""
    namespace = {"torch": library}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(textwrap.dedent(code), namespace)
    except BaseException as error:  # AssertionError too: the CUDA refusal is one
        return type(error).__name__, str(error)
    return re.sub(r" object at 0x[0-9a-f]+", "", repr(namespace["out"]))


def same_in_both(code):
    ours, theirs = _outcome(gradwalk, code), _outcome(torch, code)
    assert ours == theirs
    return ours


# ---- 1. devices, torch.cuda, torch.backends ---------------------------------------------------

@pytest.mark.parametrize("code", [
    "out = torch.zeros(2).device",
    "out = (str(torch.zeros(2).device), torch.zeros(2).device.type, torch.zeros(2).device.index)",
    "out = torch.zeros(2).device == torch.device('cpu'), torch.zeros(2).device == 'cpu'",
    "out = torch.device('cuda:1'), str(torch.device('cuda', 0)), torch.device('cpu', 0).index",
    "out = torch.device('foo')",
    "out = torch.device('cuda:x')",
    "out = torch.device(torch.device('cpu'))",
    "t = torch.ones(2)\nout = t.to('cpu') is t, t.to(torch.device('cpu'), torch.float64).dtype",
    "out = torch.ones(2).to(device='cpu', dtype=torch.float64, non_blocking=True)",
    "out = torch.zeros(2, device=torch.device('cpu')), torch.tensor([1], device='cpu')",
    "out = torch.ones(2).cuda()",
    "out = torch.ones(2).to('cuda')",
    "out = torch.ones(2).to('mps')",
    "out = torch.zeros(2, device='cuda:0')",
    "out = torch.nn.Linear(2, 2).to('cuda')",
    "out = torch.nn.Linear(2, 2).cuda()",
    "out = torch.nn.Linear(2, 2).to(torch.device('cpu')).weight.dtype",
    "out = torch.cuda.is_available(), torch.cuda.device_count()",
    "out = torch.cuda.manual_seed(0), torch.cuda.manual_seed_all(0)",
    "out = torch.cuda.current_device()",
    "torch.backends.cudnn.deterministic = True\nout = torch.backends.cudnn.deterministic\n"
    "torch.backends.cudnn.deterministic = False",
    "out = torch.backends.cudnn.benchmark, torch.backends.mps.is_available(), "
    "torch.backends.cudnn.is_available()",
    "out = torch.zeros(2).is_cuda, torch.zeros(2).is_cpu, torch.zeros(2).get_device()",
])
def test_devices_and_the_cuda_stub_match_a_cpu_only_pytorch(code):
    same_in_both(code)


def test_script_idiom_picks_the_cpu():
    same_in_both("""
        device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
        model = torch.nn.Linear(3, 1).to(device)
        x = torch.ones(4, 3, device=device)
        out = device, model(x).device, x.to(device).shape
    """)


# ---- 2. the default dtype ---------------------------------------------------------------------

@pytest.mark.parametrize("code", [
    "out = (torch.tensor([1.5]).dtype, torch.zeros(2).dtype, torch.ones(2).dtype, torch.randn(2).dtype,"
    " torch.rand(2).dtype, torch.arange(0., 2).dtype, torch.linspace(0, 1, 3).dtype,"
    " torch.full((2,), 1.5).dtype, torch.eye(2).dtype, torch.empty(1).dtype)",
    "out = (torch.arange(3) / 2).dtype, (torch.tensor(1) + 1.5).dtype, torch.tensor(2).exp().dtype",
    "out = torch.tensor(1).float().dtype, torch.tensor([1.5], dtype=torch.float32), torch.tensor([1.5])",
    "out = torch.nn.Linear(2, 2).weight.dtype, torch.get_default_dtype()",
    "out = (torch.ones(2, dtype=torch.float32) * 2.5).dtype",
])
def test_float64_default_dtype_reaches_factories_and_python_numbers(code):
    prefix = "torch.set_default_dtype(torch.float64)\ntry:\n"
    suffix = "\nfinally:\n    torch.set_default_dtype(torch.float32)\n"
    same_in_both(prefix + textwrap.indent(code, "    ") + suffix)
    assert gradwalk.get_default_dtype() is gradwalk.float32


def test_set_default_dtype_refuses_integers():
    same_in_both("out = torch.set_default_dtype(torch.int64)")
    same_in_both("out = torch.get_default_dtype()")


def test_version_is_visible_through_the_trace_alias():
    from gradwalk.tracing.torch_alias import torch_served_by_gradwalk

    with torch_served_by_gradwalk():
        import torch as aliased

        assert aliased.__version__ == gradwalk.__version__
        import torch.backends.cudnn as cudnn
        import torch.cuda

        assert cudnn is gradwalk.backends.cudnn and not torch.cuda.is_available()


# ---- 3. torch.return_types --------------------------------------------------------------------

@pytest.mark.parametrize("code", [
    "out = torch.tensor([[1., 5.], [3., 2.]]).max(dim=1)",
    "out = torch.tensor([[1., 5.], [3., 2.]], requires_grad=True).min(1)",
    "out = torch.max(torch.tensor([[1., 5.], [3., 2.]]), 0, keepdim=True)",
    "r = torch.tensor([[1., 5.], [3., 2.]]).max(1)\nv, i = r\n"
    "out = type(r).__name__, r[0] is v, r.indices is i, isinstance(r, tuple), len(r)",
])
def test_return_types_print_and_unpack_like_pytorch(code):
    same_in_both(code)


def test_return_types_pickle():
    import pickle

    r = gradwalk.tensor([[1., 5.]]).max(1)
    assert repr(pickle.loads(pickle.dumps(r))) == repr(r)
    assert isinstance(r, gradwalk.return_types.max)


# ---- 4. torch.testing.assert_close, and the lazy namespace -----------------------------------

@pytest.mark.parametrize("code", [
    "out = torch.testing.assert_close(torch.tensor([1., 2., 3.]), torch.tensor([1., 2.1, 3.]))",
    "out = torch.testing.assert_close(torch.tensor([1., 2.]), torch.tensor([1., 2.000001]))",
    "out = torch.testing.assert_close(torch.tensor([1., 2.]), torch.tensor([1., 2., 3.]))",
    "out = torch.testing.assert_close(torch.tensor([1.]), torch.tensor([1.], dtype=torch.float64))",
    "out = torch.testing.assert_close(torch.tensor([1.]), torch.tensor([1.], dtype=torch.float64),"
    " check_dtype=False)",
    "out = torch.testing.assert_close(torch.tensor([[1, 2], [3, 4]]), torch.tensor([[1, 2], [3, 5]]))",
    "out = torch.testing.assert_close(1.0, 1.1)",
    "out = torch.testing.assert_close(torch.tensor(1.0), torch.tensor(1.5))",
    "out = torch.testing.assert_close(torch.tensor([1., float('nan')]), torch.tensor([1., float('nan')]))",
    "out = torch.testing.assert_close(torch.tensor([1., float('nan')]), torch.tensor([1., float('nan')]),"
    " equal_nan=True)",
    "out = torch.testing.assert_close(torch.tensor([True, False]), torch.tensor([True, True]))",
    "out = torch.testing.assert_close([torch.tensor(1.)], [torch.tensor(2.)])",
    "out = torch.testing.assert_close(torch.zeros(2, 3), torch.ones(2, 3))",
    "out = torch.testing.assert_close(torch.tensor([1., 2.]), torch.tensor([1., 2.5]), rtol=0.1)",
    "out = torch.testing.assert_close(torch.tensor([1., 2.]), torch.tensor([1., 2.5]), rtol=0.3, atol=0)",
    "out = torch.testing.assert_close(torch.tensor([1., 2.]), torch.tensor([1., 2.5]), msg='custom')",
])
def test_assert_close_matches_pytorch(code):
    same_in_both(code)


def test_lazy_names_raise_attribute_error_not_module_not_found():
    assert not hasattr(gradwalk, "no_such_thing")
    with pytest.raises(AttributeError, match="has no attribute 'no_such_thing'"):
        gradwalk.no_such_thing  # noqa: B018
    for name in gradwalk._LAZY_SUBMODULES:
        assert getattr(gradwalk, name).__name__ == f"gradwalk.{name}"


# ---- 5. torch.linalg --------------------------------------------------------------------------

X = "x = torch.tensor([[3., -4.], [1., 2.]], requires_grad=True)\n"


@pytest.mark.parametrize("expression", [
    "torch.linalg.vector_norm(x)", "torch.linalg.vector_norm(x, 1, dim=1)",
    "torch.linalg.vector_norm(x, float('inf'), dim=0, keepdim=True)",
    "torch.linalg.vector_norm(x, 3.5, dim=(0, 1))", "torch.linalg.vector_norm(x, dtype=torch.float64)",
    "torch.linalg.norm(x)", "torch.linalg.norm(x, dim=1)", "torch.linalg.norm(x, 'fro')",
    "torch.linalg.norm(x[0], 3)", "torch.linalg.norm(x, ord='fro', dim=(0, 1), keepdim=True)",
    "torch.linalg.matrix_norm(x)", "torch.linalg.matrix_norm(torch.ones(2, 3, 4))",
    "torch.linalg.norm(torch.ones(2, 3, 4))",
    "torch.linalg.vector_norm(torch.tensor([1, 2]))", "torch.linalg.norm(torch.zeros(2, 2, 2), 2)",
    "torch.linalg.norm(x[0], 'fro')",
])
def test_linalg_norms_values_nodes_and_errors(expression):
    same_in_both(X + f"out = {expression}")
    same_in_both(X + f"{expression}.sum().backward()\nout = x.grad")


# ---- 6. small Tensor methods ------------------------------------------------------------------

@pytest.mark.parametrize("code", [
    "t = torch.tensor([[1., 2.]])\nout = t.new_zeros(2), t.new_ones((2, 3)).shape, t.new_full((2,), 3)",
    "t = torch.tensor([[1., 2.]])\nout = t.new_empty(2).shape, t.new_tensor([1, 2]), t.new_tensor([1.5])",
    "t = torch.tensor([1])\nout = t.new_zeros(2), torch.ones(1).new_zeros(2, dtype=torch.int64)",
    "out = torch.ones(1, dtype=torch.float64).new_ones(2, requires_grad=True)",
    "t = torch.tensor([[1., 2.]])\nout = t.new_tensor(t)",
    "t = torch.tensor([[1., 2.]])\nout = t.storage_offset(), t[0, 1:].storage_offset(), t.is_complex()",
    "t = torch.tensor([[1., 2.]])\nout = t.H, t.mH, torch.ones(2, 1, 3).mH.shape",
    "out = torch.ones(3).H",
    "t = torch.tensor([[1., 2.]])\nout = t.allclose(t + 1e-9), t.equal(t), t.isclose(t + 1)",
    "t = torch.tensor([[1., 2.]])\nout = t.apply_(lambda v: v * 10), t._version",
    "t = torch.tensor([[1., 2.]])\nout = t.map_(torch.tensor([3., 4.]), lambda a, b: a + b), t._version",
    "out = torch.ones(2, requires_grad=True).mul(2).apply_(lambda v: v)",
    "x = torch.ones(2, requires_grad=True)\nout = torch.detach(x * 2)",
    "z = torch.zeros(2, 1)\nout = z.squeeze_(1), z.shape, z._version",
    "out = torch.ones(2, requires_grad=True).unsqueeze_(0)",
    """
x = torch.arange(6.).reshape(2, 3).requires_grad_()
y = x * 2
y.unsqueeze_(0)
a = (y.shape, y.grad_fn, y._version)
y.squeeze_(0)
b = (y.shape, y.grad_fn, y._version)
y.unsqueeze_(2).squeeze_()
(y * torch.arange(6.).reshape(2, 3)).sum().backward()
out = a, b, y.grad_fn, x.grad
""",
])
def test_small_tensor_methods_match_pytorch(code):
    same_in_both(code)
