"""``torch.nn`` as tutorials use it, run under gradwalk and under PyTorch: the printed output of
each snippet must be the same (``nn.utils`` clipping and parametrizations, pooling, transposed
convolution, ``DataParallel`` on a machine without GPUs, ...)."""

import torch  # noqa: F401  (real PyTorch: these tests fail without it)

from parity import assert_same_output


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


def test_average_pooling_beside_pytorch():
    assert_same_output("""
        F = torch.nn.functional
        x = (torch.arange(2 * 3 * 7 * 6, dtype=torch.float64).reshape(2, 3, 7, 6).sin()).requires_grad_()
        for kw in [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                   dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
                   dict(kernel_size=3, stride=2, ceil_mode=True),
                   dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1), ceil_mode=True,
                        count_include_pad=False),
                   dict(kernel_size=2, divisor_override=3)]:
            y = F.avg_pool2d(x, **kw)
            g, = torch.autograd.grad((y * y).sum(), x)
            print(y.shape, y.grad_fn.name(), round(y.sum().item(), 8), round((g * g).sum().item(), 8))
        print(torch.autograd.gradgradcheck(lambda t: F.avg_pool2d(t, 3, 2, 1), (x[:1, :1],)))
        for size in [(1, 1), (2, 3), 3, (None, 2), (5, 4)]:
            y = F.adaptive_avg_pool2d(x, size)
            g, = torch.autograd.grad((y * y).sum(), x)
            print(y.shape, y.grad_fn.name(), round(y.sum().item(), 8), round((g * g).sum().item(), 8))
        print(torch.nn.AdaptiveAvgPool2d((2, 2)), torch.nn.AvgPool2d(2, stride=1), torch.nn.AvgPool2d(2)(x).shape)
    """)


def test_transposed_convolution_beside_pytorch():
    assert_same_output("""
        F = torch.nn.functional
        x = (torch.arange(2 * 3 * 7 * 6, dtype=torch.float64).reshape(2, 3, 7, 6).sin()).requires_grad_()
        w = (torch.arange(3 * 4 * 3 * 3, dtype=torch.float64).reshape(3, 4, 3, 3).cos()).requires_grad_()
        b = torch.arange(4., dtype=torch.float64).requires_grad_()
        for kw in [dict(), dict(stride=2), dict(stride=2, padding=1, output_padding=1), dict(stride=2, dilation=2)]:
            y = F.conv_transpose2d(x, w, b, **kw)
            gx, gw, gb = torch.autograd.grad((y * y).sum(), (x, w, b))
            print(y.shape, y.grad_fn.name(), [f is not None for f, _ in y.grad_fn.next_functions],
                  round(y.sum().item(), 6), round(gx.sum().item(), 4), round(gw.sum().item(), 4),
                  round(gb.sum().item(), 4))
        grouped = (torch.arange(4 * 2 * 2 * 2, dtype=torch.float64).reshape(4, 2, 2, 2).cos()).requires_grad_()
        y = F.conv_transpose2d(torch.ones(1, 4, 3, 3, dtype=torch.float64), grouped, groups=2, stride=2)
        print(y.shape, round(y.sum().item(), 6))
        print(torch.autograd.gradcheck(lambda a, b: F.conv_transpose2d(a, b, stride=2, padding=1),
                                       (x[:1, :, :3, :3].detach().requires_grad_(), w)))
        torch.manual_seed(0)
        layer = torch.nn.ConvTranspose2d(3, 4, 3, stride=2)
        print(layer, layer.weight.shape, layer(x.float()).shape)
    """)


def test_channel_dropout_and_data_parallel_without_gpus():
    assert_same_output("""
        import warnings
        nn = torch.nn
        torch.manual_seed(0)
        x = torch.ones(2, 4, 2, 2, requires_grad=True)
        y = nn.functional.dropout2d(x, 0.5)
        print(y[:, :, 0, 0], y.grad_fn.name())
        y.sum().backward()
        print(x.grad[:, :, 1, 1])
        d = nn.Dropout2d(0.3)
        print(d, d(torch.ones(1, 3, 1, 1)).shape)
        d.eval()
        print(d(torch.ones(1, 3, 1, 1)).flatten())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            print(nn.functional.dropout2d(torch.ones(4, 2, 2), 0.5).shape, [str(m.message) for m in caught])
        model = nn.DataParallel(nn.Linear(2, 1))
        print(model, list(model.state_dict()), model.module, model.device_ids, model(torch.ones(3, 2)).shape)
    """)


def test_conv_transpose_default_init_draws_as_pytorch_from_the_same_seed():
    import numpy as np

    import gradwalk

    torch.manual_seed(3)
    gradwalk.manual_seed(3)
    theirs, ours = torch.nn.ConvTranspose2d(3, 4, 3), gradwalk.nn.ConvTranspose2d(3, 4, 3)
    assert np.array_equal(theirs.weight.detach().numpy(), ours.weight.detach().numpy())
    assert np.array_equal(theirs.bias.detach().numpy(), ours.bias.detach().numpy())
