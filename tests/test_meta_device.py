"""The meta device beside PyTorch: tensors with a shape, a dtype, strides and a graph, no data.

Read like PyTorch's recipe "Reasoning about shapes": push meta tensors through layers to learn
the shapes that come out, without computing (or allocating) anything.
"""
import copy

import pytest
import torch

import gradwalk


def both(snippet):
    """The repr (or the error) the snippet gives on each library."""
    out = {}
    for name, lib in (("torch", torch), ("gradwalk", gradwalk)):
        try:
            out[name] = repr(eval(snippet, {"torch": lib}))  # test code: our own snippets, not the lab's
        except Exception as error:  # noqa: BLE001 - the error is the result
            out[name] = f"{type(error).__name__}: {error}"
    return out["torch"], out["gradwalk"]


def assert_same(snippet):
    expected, got = both(snippet)
    assert got == expected, snippet


@pytest.mark.parametrize("snippet", [
    "torch.empty(2, 3, device='meta')",
    "torch.empty((), device='meta')",
    "torch.empty(0, device='meta')",
    "torch.empty(0, 3, device='meta')",
    "torch.zeros(3, device='meta', dtype=torch.int64)",
    "torch.ones(3, device='meta', dtype=torch.float64)",
    "torch.empty(3, device='meta', dtype=torch.bool)",
    "torch.empty(3, device='meta', dtype=torch.float16)",
    "torch.empty(2, 3, device='meta', requires_grad=True)",
    "torch.empty(2, 3, device='meta', requires_grad=True) * 2",
    "torch.ones(2, 2, device=torch.device('meta'), requires_grad=True).sum()",
    "torch.rand(2, 3, 10, 10, device='meta')",
    "torch.randn(4, device='meta')",
    "torch.randint(10, (3,), device='meta')",
    "torch.arange(5, device='meta')",
    "torch.tensor([1., 2.], device='meta')",
    "torch.full((2,), 7., device='meta')",
    "torch.zeros_like(torch.empty(2, 3, device='meta'))",
    "torch.ones(2).to('meta')",
    "torch.ones(2, requires_grad=True).to('meta')",
    "torch.empty(2, 3, device='meta').double()",
    "torch.device('meta')",
])
def test_a_meta_tensor_prints_its_size_not_its_values(snippet):
    assert_same(snippet)


@pytest.mark.parametrize("snippet", [
    "torch.empty(2, 3, device='meta').item()",
    "torch.empty((), device='meta').item()",
    "float(torch.empty((), device='meta'))",
    "bool(torch.empty((), device='meta'))",
    "torch.empty(2, 3, device='meta').tolist()",
    "torch.empty(2, 3, device='meta').numpy()",
    "torch.empty(2, 3, device='meta').cpu()",
    "torch.empty(2, 3, device='meta').to('cpu')",
    "torch.empty(2, 3, device='meta') + torch.ones(2, 3)",
    "torch.ones(2, 3) + torch.empty(2, 3, device='meta')",
    "torch.cat([torch.empty(2, 3, device='meta'), torch.ones(2, 3)])",
    "torch.empty(4, device='meta')[torch.empty(4, device='meta') > 0]",
    "torch.empty(4, device='meta').nonzero()",
    "torch.nn.Linear(2, 3, device='meta').to('cpu')",
    "torch.ones(2, 3).copy_(torch.empty(2, 3, device='meta'))",
    "torch.equal(torch.empty(2, device='meta'), torch.empty(2, device='meta'))",
    "torch.allclose(torch.empty(2, device='meta'), torch.empty(2, device='meta'))",
    "torch.empty(2, device='meta').unique()",
    "torch.empty(2, device='meta').to(torch.ones(2))",
])
def test_asking_a_meta_tensor_for_values_fails_as_in_pytorch(snippet):
    assert_same(snippet)


@pytest.mark.parametrize("snippet", [
    "torch.empty(2, 3, device='meta') + torch.tensor(1.)",  # a 0-dim CPU tensor is a number
    "torch.empty(2, 3, device='meta') + 1",
    "torch.empty(2, 3, device='meta').sum(0)",
    "torch.empty(2, 3, device='meta').mean()",
    "torch.empty(2, 3, device='meta').max()",
    "torch.empty(2, 3, device='meta').softmax(-1)",
    "torch.empty(2, 3, device='meta') @ torch.empty(3, 4, device='meta')",
    "torch.empty(2, 3, device='meta').view(6)",
    "torch.empty(2, 3, device='meta').t().reshape(-1)",
    "torch.empty(2, 3, device='meta')[0]",
    "torch.empty(2, 3, device='meta') == torch.empty(2, 3, device='meta')",
    "torch.cat([torch.empty(2, 3, device='meta'), torch.empty(2, 3, device='meta')])",
    "torch.empty(4, device='meta')[torch.tensor([0, 1])]",
    "torch.empty(2, 3, device='meta').fill_(1.)",
    "torch.empty(2, 3, device='meta').normal_()",
    "torch.empty(2, 3, device='meta').clone()",
    "torch.empty(2, 3, device='meta').detach()",
    "torch.empty(10**12, device='meta')",
    "torch.empty(10**12, device='meta').sum()",
    "(torch.empty(10**12, device='meta') * 2 + 1).exp()",
    "torch.empty(2, 3, device='meta').stride()",
    "torch.empty(2, 3, device='meta').t().stride()",
    "torch.empty(2, 3, device='meta').expand(4, 2, 3).stride()",
    "torch.empty(3, 4, device='meta')[1:, ::2].stride()",
    "torch.empty(3, 4, device='meta').t().contiguous().stride()",
    "torch.empty(2, 3, device='meta').t().is_contiguous()",
    "torch.empty(2, 3, device='meta').is_meta",
    "torch.ones(2).is_meta",
    "torch.empty(2, 3, device='meta').device",
    "torch.empty(2, 3, device='meta').data_ptr()",
    "torch.empty(2, 3, device='meta').element_size()",
    "f'{torch.empty((), device=\"meta\")}'",
    "torch.empty(2, 3, device='meta').copy_(torch.ones(2, 3))",
    "torch.empty(2, 3, device='meta').argmax()",
    "torch.empty(2, 3, device='meta').argmax(1)",
    "(torch.empty(2, 3, device='meta') > 0).all()",
    "torch.empty(2, 3, device='meta').any(0)",
    "torch.empty(2, device='meta').new_zeros(3)",
    "torch.empty(2, device='meta').type()",
    "torch.empty(10**6, 10**6, device='meta') @ torch.empty(10**6, 10**6, device='meta')",
    "torch.nn.Linear(10**5, 10**5, device='meta')(torch.empty(10**3, 10**5, device='meta'))",
    "torch.nn.LayerNorm(4, device='meta').weight",
    "torch.nn.Embedding(10, 4, device='meta')(torch.zeros(3, dtype=torch.long, device='meta'))",
    "torch.nn.Embedding(10, 4, device='meta')(torch.zeros(10**7, dtype=torch.long, device='meta'))",
    "torch.nn.functional.max_pool2d(torch.empty(8, 64, 1024, 1024, device='meta'), 2)",
    "torch.empty(8, 12, 1024, 1024, device='meta').softmax(-1)",
    "torch.empty(10**8, device='meta').cumsum(0)",
    "torch.empty(4000, 3000, device='meta').var(1)",
    "torch.empty(4000, 3000, device='meta').max(1)",
    "torch.bitwise_and(torch.empty(3, dtype=torch.int64, device='meta'), 1)",
    "~torch.empty(3, dtype=torch.int64, device='meta')",
    "torch.empty(3, dtype=torch.int64, device='meta') // 2",
    "torch.nn.functional.one_hot(torch.empty(3, dtype=torch.int64, device='meta'), 5)",
    "torch.multinomial(torch.empty(4, 3, device='meta'), 2)",
    "torch.bernoulli(torch.empty(4, 3, device='meta'))",
    "torch.empty(4, 3, device='meta').bernoulli_(0.5)",
    "torch.count_nonzero(torch.empty(4, 3, device='meta'))",
    "torch.nn.functional.pad(torch.empty(4, 3, device='meta'), (1, 2))",
    "torch.ones(2, dtype=torch.float64).to(torch.empty(2, device='meta'))",
    "torch.ones(2).to(torch.empty(1, dtype=torch.float64, device='meta'))",
    "torch.nn.functional.cross_entropy(torch.empty(4, 5, device='meta'), "
    "torch.empty(4, device='meta', dtype=torch.long))",
])
def test_ops_on_meta_tensors_give_meta_tensors_of_the_right_shape(snippet):
    assert_same(snippet)


def test_dropout_on_meta_draws_nothing():
    # PyTorch's generator is not touched by a meta dropout: the next CPU draw is the same
    draws = []
    for lib in (torch, gradwalk):
        lib.manual_seed(0)
        out = lib.nn.functional.dropout(lib.empty(10**12, device="meta"), 0.1)
        draws.append((repr(out), lib.rand(3).tolist()))
    assert draws[1] == draws[0]


def test_backward_through_meta_tensors_builds_meta_gradients():
    for lib in (torch, gradwalk):
        x = lib.empty(3, device="meta", requires_grad=True)
        y = (x * 2).sum()
        y.backward()
        assert repr(x.grad) == "tensor(..., device='meta', size=(3,))"
        assert type(y.grad_fn).__name__ == "SumBackward0"


def test_the_recipe_convolution_on_a_huge_meta_batch_allocates_nothing():
    # PyTorch's recipe: a (1024, 3, 65536, 65536) float32 batch would take 52 TB
    outputs = []
    for lib in (torch, gradwalk):
        conv = lib.nn.Conv2d(3, 5, 2, device="meta")
        t_large = lib.rand(2**10, 3, 2**16, 2**16, device="meta")
        outputs.append(repr(conv(t_large)))
    assert outputs[1] == outputs[0]
    assert outputs[0] == ("tensor(..., device='meta', size=(1024, 5, 65535, 65535),\n"
                          "       grad_fn=<ConvolutionBackward0>)")


def test_a_network_built_under_the_meta_device_context_reports_every_layers_shape():
    lines = {}
    for lib in (torch, gradwalk):
        nn, F = lib.nn, lib.nn.functional

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(3, 6, 5)
                self.pool = nn.MaxPool2d(2, 2)
                self.conv2 = nn.Conv2d(6, 16, 5)
                self.fc1 = nn.Linear(16 * 5 * 5, 120)
                self.fc2 = nn.Linear(120, 10)

            def forward(self, x):
                x = self.pool(F.relu(self.conv1(x)))
                x = self.pool(F.relu(self.conv2(x)))
                x = lib.flatten(x, 1)
                return self.fc2(F.relu(self.fc1(x)))

        seen = lines[lib.__name__] = []
        with lib.device("meta"):
            net = Net()
            inp = lib.randn((64, 3, 32, 32))
            seen.append(str(lib.get_default_device()))
        seen.append(f"{lib.get_default_device()} {lib.zeros(1).device}")
        for _, layer in net.named_modules():
            layer.register_forward_hook(lambda m, i, o: seen.append(f"{type(m).__name__} {o.shape}"))
        out = net(inp)
        out.sum().backward()
        seen += [repr(out), repr(net.fc1.weight), repr(net.fc1.weight.grad)]
    assert lines["gradwalk"] == lines["torch"]


def test_a_module_moved_to_meta_runs_with_real_parameters_through_functional_call():
    # the model-ensembling tutorial: a meta copy of the model is only its structure
    for lib in (torch, gradwalk):
        lib.manual_seed(0)
        models = [lib.nn.Linear(4, 2) for _ in range(3)]
        params, buffers = lib.func.stack_module_state(models)
        base = copy.deepcopy(models[0]).to("meta")
        assert repr(base.weight) == ("Parameter containing:\n"
                                     "tensor(..., device='meta', size=(2, 4), requires_grad=True)")
        x = lib.ones(5, 4)
        out = lib.vmap(lambda p, b, x: lib.func.functional_call(base, (p, b), (x,)), in_dims=(0, 0, None))(
            params, buffers, x)
        assert not out.is_meta and out.shape == (3, 5, 2)
        assert lib.allclose(out[1], models[1](x))


def test_init_on_meta_then_to_empty_then_reset_parameters():
    # the large-model pattern: build without memory, materialise, initialise
    for lib in (torch, gradwalk):
        with lib.device("meta"):
            layer = lib.nn.Linear(3, 2)
        assert layer.weight.is_meta and layer.weight.requires_grad
        layer.to_empty(device="cpu")
        assert not layer.weight.is_meta and layer.weight.shape == (2, 3) and layer.weight.requires_grad
        layer.reset_parameters()
        assert layer(lib.ones(1, 3)).shape == (1, 2)


def test_to_empty_values_match_after_reset_on_both_libraries():
    weights = []
    for lib in (torch, gradwalk):
        layer = lib.nn.Linear(3, 2, device="meta").to_empty(device="cpu")
        lib.manual_seed(0)
        layer.reset_parameters()
        weights.append(layer.weight.tolist())
    assert weights[0] == weights[1]


def test_set_default_device_meta():
    for lib in (torch, gradwalk):
        lib.set_default_device("meta")
        try:
            assert lib.zeros(2).is_meta and str(lib.get_default_device()) == "meta"
        finally:
            lib.set_default_device(None)
        assert not lib.zeros(2).is_meta and str(lib.get_default_device()) == "cpu"


def test_a_huge_meta_op_without_a_shape_rule_is_refused_by_name_not_allocated():
    # gradwalk (not PyTorch) limit: ops whose forward needs values run on zeros only up to
    # _meta.BOUND elements; past that, a clear error instead of an allocation
    x = gradwalk.empty(10**12, device="meta")
    with pytest.raises(NotImplementedError, match="meta device"):
        x.topk(5)


def test_a_checkpoint_loads_into_a_meta_model_with_assign():
    # the large-model loading pattern: no memory until the checkpoint's tensors are assigned
    seen = {}
    for lib in (torch, gradwalk):
        lib.manual_seed(0)
        nn = lib.nn
        state = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Linear(4, 2)).state_dict()
        with lib.device("meta"):
            model = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Linear(4, 2))
        with pytest.warns(UserWarning) as caught:
            model.load_state_dict(state)  # into meta parameters: a no-op, with PyTorch's warning
        result = model.load_state_dict(state, assign=True)
        seen[lib.__name__] = ([str(w.message) for w in caught], repr(result), repr(model(lib.ones(2, 3))),
                              type(model[0].weight).__name__, model[0].weight.requires_grad)
    assert seen["gradwalk"] == seen["torch"]


@pytest.mark.parametrize("view", [
    "m[None]", "m[:, None]", "m.unsqueeze(-1)", "m.expand(1, 2, 3, 4)", "m[:, :1].expand(2, 5, 4)",
    "m.permute(2, 0, 1)", "m.transpose(0, 2).reshape(4, 6)", "m.view(6, 4)", "m.flatten(1)", "m[..., 1]",
    "m[1:, ::2, 1:3]", "m.mT", "m.narrow(2, 1, 2)", "m.select(1, 0)", "m[:, 0:1].squeeze(1)",
    "m.diagonal(0, 1, 2)", "m.chunk(2, 2)[1]", "m.split(1, 0)[1]", "m.unbind(1)[2]", "m.movedim(0, -1)",
    "m.permute(2, 0, 1).contiguous()", "m.permute(2, 0, 1) + 1", "m.permute(2, 0, 1).exp()", "m.mT.sum(0)",
    "m.repeat(1, 2, 1)",
])
def test_meta_strides_follow_views_as_pytorchs_do(view):
    strides = []
    for lib in (torch, gradwalk):
        m = lib.empty(2, 3, 4, device="meta")
        t = eval(view, {"m": m})  # test code: our own expressions
        strides.append((t.shape, t.stride(), t.is_contiguous()))
    assert strides[1] == strides[0]
