"""Writing into a tensor that overlaps what the op reads, beside PyTorch.

``y[1:].add_(y[:-1])`` would give a different answer depending on the order the elements are
written in, so PyTorch refuses it; ``y.add_(y)`` reads each element only where it writes it, so
it runs. These tests run each pattern under both libraries: the same values, or the same error.
"""
import warnings

import pytest

from parity import assert_same_error, printed

REFUSED = {
    "add_ shifted by one": "y[1:].add_(y[:-1])",
    "sub_ shifted the other way": "y[:-1].sub_(y[1:])",
    "mul_ of a detached overlapping view": "y[1:].mul_(y[:-1].detach())",
    "copy_ from an overlapping slice": "y[1:].copy_(y[:-1])",
    "slice assignment": "y[1:] = y[:-1]",
    "advanced-index assignment": "y[[1, 2]] = y[:2]",
    "boolean-mask assignment": "y[torch.tensor([True, False, True, False, False, False])] = y[:2]",
    "index_put_ with accumulate": "y.index_put_((torch.tensor([1, 2]),), y[:2], accumulate=True)",
    "out= overlapping its input": "torch.mul(y[:-1], 2, out=y[1:])",
    "clamp_ with an overlapping bound": "y[1:].clamp_(min=y[:-1])",
    "add_ of the transpose": "m = torch.arange(4.).view(2, 2)\nm.add_(m.t())",
    "in a graph": "z = y.clone().requires_grad_()\nw = z * 1\nw[1:].mul_(w[:-1])",
    "expanded tensor written by add_": "torch.zeros(1).expand(3).add_(1)",
    "expanded tensor written by copy_": "torch.zeros(3, 1).expand(3, 2).copy_(torch.ones(3, 2))",
}

ALLOWED = {
    "add_ of itself": "y.add_(y)",
    "slice assigned to itself": "y[:3] = y[:3]",
    "disjoint slices": "y[:3].add_(y[3:])",
    "a 0-dim element into other elements": "y[1:3] = y[0]",
    "rows of a matrix": "m = y.view(2, 3)\nm[0] = m[1]",
    "strided views (PyTorch does not decide: it runs)": "y[::2] = y[1::2]",
    "a clone": "y[1:].copy_(y[:-1].clone())",
    "fill_ into an expanded tensor": "y = torch.zeros(3, 1).expand(3, 2)\ny.fill_(1.5)",
    "zero_ into an expanded tensor": "y = torch.ones(3, 1).expand(3, 2)\ny.zero_()",
}


def snippet(body):
    return "y = torch.arange(6.)\n" + body + "\nprint(y.tolist())"


@pytest.mark.parametrize("body", REFUSED.values(), ids=REFUSED.keys())
def test_partial_or_internal_overlap_is_refused_as_in_pytorch(body):
    assert_same_error(snippet(body))


@pytest.mark.parametrize("body", ALLOWED.values(), ids=ALLOWED.keys())
def test_full_or_no_overlap_runs_as_in_pytorch(body):
    assert printed("gradwalk", snippet(body)) == printed("torch", snippet(body))


def test_masked_fill_into_an_expanded_tensor_warns_and_writes():
    body = "y = torch.zeros(3, 1).expand(3, 2)\ny.masked_fill_(torch.ones(3, 2, dtype=torch.bool), 1.)"
    outputs = []
    for library in ("gradwalk", "torch"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            outputs.append(printed(library, snippet(body)))
        assert any("Use of masked_fill_ on expanded tensors is deprecated" in str(w.message) for w in caught)
    assert outputs[0] == outputs[1]
