import gradwalk as torch


def test_neuron_gradients_match_the_seed():
    w = torch.tensor(0.5, requires_grad=True)
    x = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(-0.3, requires_grad=True)
    y = torch.tanh(w * x + b)
    assert repr(y) == "tensor(0.6044, grad_fn=<TanhBackward0>)"
    y.backward()
    assert abs(w.grad.item() - 1.26947918) < 1e-6
    assert abs(x.grad.item() - 0.31736979) < 1e-6
    assert abs(b.grad.item() - 0.63473959) < 1e-6
