"""``torch.nn`` as tutorials use it, run under gradwalk and under PyTorch: the printed output of
each snippet must be the same (``nn.utils`` clipping and parametrizations, pooling, transposed
convolution, ``DataParallel`` on a machine without GPUs, ...)."""
import contextlib
import io
import textwrap

import torch  # noqa: F401  (real PyTorch: these tests fail without it)

from parity import run_in


def printed(library, snippet):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        run_in(library, textwrap.dedent(snippet))
    return out.getvalue()


def assert_same_output(snippet):
    ours, theirs = printed("gradwalk", snippet), printed("torch", snippet)
    assert ours == theirs


def test_gradient_clipping_and_parameters_as_one_vector():
    assert_same_output("""
        nn = torch.nn
        m = nn.Linear(4, 2)
        with torch.no_grad():
            m.weight.copy_(torch.arange(8.).reshape(2, 4))
            m.bias.fill_(1.)
        m(torch.ones(1, 4)).sum().backward()
        print(torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0), m.weight.grad, m.bias.grad)
        print(torch.nn.utils.clip_grad_norm_(m.parameters(), 0.5, norm_type='inf'), m.weight.grad)
        torch.nn.utils.clip_grad_value_(m.parameters(), 0.1)
        print(m.weight.grad)
        v = torch.nn.utils.parameters_to_vector(m.parameters())
        print(v, v.grad_fn.name())
        torch.nn.utils.vector_to_parameters(v * 2, m.parameters())
        print(m.weight, m.bias)
    """)


def test_a_symmetric_weight_by_parametrization():
    # the parametrizations tutorial's first example
    assert_same_output("""
        nn, P = torch.nn, torch.nn.utils.parametrize
        layer = nn.Linear(3, 3)
        with torch.no_grad():
            layer.weight.copy_(torch.arange(9.).reshape(3, 3) / 10)
            layer.bias.fill_(0.5)
        class Symmetric(nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).transpose(0, 1)
        P.register_parametrization(layer, "weight", Symmetric())
        print(type(layer).__name__, layer.weight, [n for n, _ in layer.named_parameters()])
        print(P.is_parametrized(layer), P.is_parametrized(layer, "bias"))
        layer(torch.ones(2, 3)).sum().backward()
        print(layer.parametrizations.weight.original.grad)
        print(layer)
        with P.cached():
            print(layer.weight is layer.weight)
        P.remove_parametrizations(layer, "weight")
        print(type(layer).__name__, [n for n, _ in layer.named_parameters()], layer.weight)
    """)
