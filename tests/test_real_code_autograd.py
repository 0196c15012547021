"""Autograd behaviour that real code relies on, run under gradwalk and under PyTorch side by side:
legal code that must run (a ``view`` of a ``split()`` output, ``t[range(n), idx] -= 1``) and
answers that must agree, errors included (a second backward through ``index_put``, pruning in
``autograd.grad``, ``no_grad`` on a generator, ...)."""
import pytest
import torch  # noqa: F401  (real PyTorch: these tests fail without it)

from parity import assert_same, message, run_both, run_in


def test_attention_heads_view_a_split_output():
    # minGPT / nanoGPT: q, k, v = c_attn(x).split(C, dim=2); q.view(B, T, nh, hs).transpose(1, 2)
    gw, pt = run_both("""
        B, T, C, nh = 2, 3, 8, 2
        x = (torch.arange(B * T * 3 * C, dtype=torch.float32).reshape(B, T, 3 * C) / 10).requires_grad_()
        q, k, v = x.split(C, dim=2)
        q = q.view(B, T, nh, C // nh).transpose(1, 2)
        k = k.view(B, T, nh, C // nh).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        att.pow(2).sum().backward()
        facts = (q.stride(), q.grad_fn.name(), q.grad_fn.next_functions[0][0].name(),
                 q._base is x)
    """)
    assert gw["facts"] == pt["facts"]
    assert_same(gw["att"], pt["att"], rtol=1e-5)
    assert_same(gw["x"].grad, pt["x"].grad, rtol=1e-4, atol=1e-6)


def test_views_that_cross_chunks_are_refused_as_pytorch_refuses_them():
    results = {}
    for library in ("gradwalk", "torch"):
        outcomes = []
        for snippet in ["torch.arange(24.).reshape(4, 6)[:, 1:3].view(4, 2, 1).stride()",
                        "torch.arange(24.).reshape(4, 6)[:, 1:3].view(8)",
                        "torch.arange(24.).reshape(2, 3, 4).permute(1, 0, 2).view(3, 2, 2, 2).stride()",
                        "torch.arange(24.).reshape(2, 3, 4).permute(1, 0, 2).view(6, 4)",
                        "torch.arange(24.).reshape(2, 3, 4).permute(1, 0, 2).reshape(6, 4).grad_fn",
                        "torch.arange(12.)[::2].view(3, 2).stride()"]:
            try:
                outcomes.append(run_in(library, f"result = {snippet}")["result"])
            except RuntimeError as error:
                outcomes.append(message(error))
        results[library] = outcomes
    assert results["gradwalk"] == results["torch"]


def test_subtracting_one_at_each_rows_target_with_a_range_index():
    # the softmax-gradient trick of a lecture notebook: dlogits[range(n), Yb] -= 1
    gw, pt = run_both("""
        logits = torch.tensor([[0.5, 1.0, -1.0, 2.0], [0.0, 0.3, 0.2, 0.1], [1.0, 1.0, 1.0, 1.0]],
                              requires_grad=True)
        Yb = torch.tensor([1, 0, 3])
        dlogits = logits.softmax(1).clone()   # softmax saves its output: write into a copy
        dlogits[range(3), Yb] -= 1
        dlogits.pow(2).sum().backward()
        picked = logits[range(3), Yb]
        node = dlogits.grad_fn.name()
    """)
    assert gw["node"] == pt["node"]
    assert_same(gw["dlogits"], pt["dlogits"])
    assert_same(gw["picked"], pt["picked"])
    assert_same(gw["logits"].grad, pt["logits"].grad, rtol=1e-5)


@pytest.mark.parametrize("write", ["t[torch.tensor([0, 2]), torch.tensor([1, 1])] = 5.",
                                   "t[range(3), [1, 0, 3]] = 0.",
                                   "t[torch.tensor([True, False, True])] = 0.",
                                   "t[:, [0, 1]] = 0."])
def test_a_second_backward_through_index_put_is_refused(write):
    snippet = f"""
        w = torch.ones(3, 4, requires_grad=True)
        t = w.clone()
        {write}
        s = t.sum()
        s.backward(retain_graph=True)
        s.backward()           # retained: the gradient doubles
        doubled = w.grad.clone()
        s.backward()
    """
    errors = []
    for library in ("gradwalk", "torch"):
        with pytest.raises(RuntimeError) as info:
            run_in(library, snippet)
        errors.append(message(info.value))
    assert errors[0] == errors[1]
    assert errors[0].startswith("Trying to backward through the graph a second time")
