"""Custom ops with ``autograd.Function``, run side by side with PyTorch."""
import numpy as np
import pytest
import torch  # real PyTorch: these tests compare against it and must fail without it

import gradwalk
from conftest import assert_same, assert_same_error, run_both

SQ = """
class Sq(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k=2.0):
        ctx.save_for_backward(x)
        ctx.k = k
        return x * x

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        seen.append((ctx.needs_input_grad, torch.is_grad_enabled()))
        return 2 * x * grad, None
seen = []
"""


def test_a_square_function_gives_the_power_rule_and_pytorchs_node():
    gw, pt = run_both(SQ + """
x = torch.tensor([1., 2.], requires_grad=True)
before = (x * 1).grad_fn._sequence_nr()
y = Sq.apply(x)
after = (x * 1).grad_fn._sequence_nr()
y.sum().backward()
""")
    for ns in (gw, pt):
        node = ns["y"].grad_fn
        assert type(node).__name__ == "SqBackward" and node.name() == "SqBackward"
        assert len(node.next_functions) == 1
        assert type(node.next_functions[0][0]).__name__ == "AccumulateGrad"
        assert ns["after"] - ns["before"] == 2  # the custom node took exactly one number
        assert ns["seen"] == [((True,), False)]
        assert node.k == 2.0
    assert_same(gw["x"].grad, pt["x"].grad)
    assert gw["x"].grad.tolist() == [2.0, 4.0]
    assert isinstance(gw["y"].grad_fn, gradwalk.autograd.graph.Node)


def test_one_edge_per_tensor_argument_only():
    gw, pt = run_both("""
class G(torch.autograd.Function):
    @staticmethod
    def forward(ctx, n, x, y):
        return x * y * n
    @staticmethod
    def backward(ctx, g):
        return None, g, g
a = torch.ones(2, requires_grad=True)
out = G.apply(3, a, torch.ones(2))
edges = [None if fn is None else type(fn).__name__ for fn, _ in out.grad_fn.next_functions]
out.sum().backward()
""")
    assert gw["edges"] == pt["edges"] == ["AccumulateGrad", None]
    assert_same(gw["a"].grad, pt["a"].grad)


def test_a_sequence_number_is_taken_even_without_a_graph():
    gw, pt = run_both(SQ + """
x = torch.tensor([1., 2.], requires_grad=True)
first = (x * 1).grad_fn._sequence_nr()
with torch.no_grad():
    y = Sq.apply(x)
z = Sq.apply(torch.ones(2))
last = (x * 1).grad_fn._sequence_nr()
""")
    assert gw["last"] - gw["first"] == pt["last"] - pt["first"] == 3
    assert gw["y"].grad_fn is None and gw["z"].grad_fn is None


@pytest.mark.parametrize("backward_returns, call", [
    ("g, g", "F.apply(torch.ones(3, requires_grad=True))"),
    ("1", "F.apply(torch.ones(3, requires_grad=True))"),
    ("torch.ones(4)", "F.apply(torch.ones(3, requires_grad=True))"),
    ("g, g", "F.apply(torch.ones(3, requires_grad=True), 2)"),
])
def test_wrong_gradients_raise_pytorchs_errors(backward_returns, call):
    assert_same_error(f"""
class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, *rest):
        return x.clone()
    @staticmethod
    def backward(ctx, g):
        return {backward_returns}
{call}.sum().backward()
""")


def test_extra_none_gradients_are_dropped_and_broadcast_gradients_are_reduced():
    gw, pt = run_both("""
class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()
    @staticmethod
    def backward(ctx, g):
        return torch.ones(2, 3), None, None
x = torch.ones(3, requires_grad=True)
F.apply(x).sum().backward()
""")
    assert_same(gw["x"].grad, pt["x"].grad)
    assert gw["x"].grad.tolist() == [2.0, 2.0, 2.0]


def test_saved_tensors_are_freed_after_backward():
    assert_same_error(SQ + """
y = Sq.apply(torch.tensor([1., 2.], requires_grad=True))
y.sum().backward()
y.grad_fn.saved_tensors
""")
    assert_same_error(SQ + """
y = Sq.apply(torch.tensor([1., 2.], requires_grad=True))
y.sum().backward()
y.sum().backward()
""")


def test_saved_tensors_are_version_checked():
    assert_same_error(SQ + """
x = torch.tensor([1., 2.], requires_grad=True)
h = x * 1
y = Sq.apply(h)
h.add_(1)
y.sum().backward()
""")


def test_mark_dirty_makes_the_input_the_output():
    gw, pt = run_both("""
class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x
    @staticmethod
    def backward(ctx, g):
        return 2 * g
leaf = torch.ones(2, requires_grad=True)
h = leaf.clone()
out = Double.apply(h)
same, version, name = out is h, h._version, type(h.grad_fn).__name__
out.sum().backward()
""")
    for ns in (gw, pt):
        assert ns["same"] and ns["version"] == 2 and ns["name"] == "DoubleBackward"
    assert_same(gw["leaf"].grad, pt["leaf"].grad)
    assert_same_error("""
class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x
    @staticmethod
    def backward(ctx, g):
        return 2 * g
Double.apply(torch.ones(2, requires_grad=True))
""")


def test_an_input_returned_as_is_comes_back_as_a_new_view():
    gw, pt = run_both("""
class Id(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x
    @staticmethod
    def backward(ctx, g):
        return g
x = torch.ones(2, requires_grad=True)
out = Id.apply(x)
facts = (out is x, out._base is x, type(out.grad_fn).__name__)
""")
    assert gw["facts"] == pt["facts"] == (False, True, "IdBackward")


def test_non_differentiable_outputs_and_materialized_grads():
    gw, pt = run_both("""
class ND(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        a, mask = x.clone(), (x > 1).float()
        ctx.mark_non_differentiable(mask)
        return a, mask
    @staticmethod
    def backward(ctx, ga, gmask):
        received.append(gmask.tolist())
        return ga

class Lazy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x.clone(), x.clone()
    @staticmethod
    def backward(ctx, g1, g2):
        received.append(g2)
        return g1
received = []
x = torch.tensor([2., 1.], requires_grad=True)
a, mask = ND.apply(x)
flags = (a.requires_grad, mask.requires_grad)
a.sum().backward()
p, q = Lazy.apply(x)
p.sum().backward()
""")
    assert gw["flags"] == pt["flags"] == (True, False)
    assert gw["received"] == pt["received"] == [[0.0, 0.0], None]


def test_setup_context_and_a_saved_output():
    gw, pt = run_both("""
class Cube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x ** 3
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], output)
    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        names.append(type(out.grad_fn).__name__)
        return 3 * out / x * g
names = []
x = torch.tensor([2.0], dtype=torch.float64, requires_grad=True)
Cube.apply(x).sum().backward()
""")
    assert gw["names"] == pt["names"] == ["CubeBackward"]
    assert gw["x"].grad.tolist() == [12.0]  # the power rule at x = 2
    assert_same(gw["x"].grad, pt["x"].grad)


def test_custom_jvp_in_forward_mode():
    gw, pt = run_both("""
import importlib
fwAD = importlib.import_module(torch.__name__ + ".autograd.forward_ad")
class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = x.exp()
        ctx.save_for_forward(result)
        ctx.result = result
        return result
    @staticmethod
    def backward(ctx, g):
        return g * ctx.result
    @staticmethod
    def jvp(ctx, t):
        result, = ctx.saved_tensors
        return t * result
with fwAD.dual_level():
    out = Exp.apply(fwAD.make_dual(torch.tensor([0.5, 1.0], dtype=torch.float64),
                                   torch.tensor([1.0, 2.0], dtype=torch.float64)))
    tangent = fwAD.unpack_dual(out).tangent
""")
    assert_same(gw["tangent"], pt["tangent"])
    assert_same_error("""
import importlib
fwAD = importlib.import_module(torch.__name__ + ".autograd.forward_ad")
class NoJvp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()
    @staticmethod
    def backward(ctx, g):
        return g
with fwAD.dual_level():
    NoJvp.apply(fwAD.make_dual(torch.ones(2), torch.ones(2)))
""")


def test_once_differentiable_refuses_a_second_derivative():
    code = """
import importlib
once_differentiable = importlib.import_module(torch.__name__ + ".autograd.function").once_differentiable
class Sq(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x
    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g
x = torch.tensor([3.0], requires_grad=True)
seed = torch.ones(1, requires_grad=True)  # a seed that requires grad: the result is differentiable
g, = torch.autograd.grad(Sq.apply(x), x, seed, create_graph=True)
"""
    gw, pt = run_both(code)
    assert gw["g"].tolist() == pt["g"].tolist() == [6.0]
    assert gw["g"].grad_fn.name() == pt["g"].grad_fn.name() == "torch::autograd::Error"
    assert_same_error(code + "g.sum().backward()")


def test_missing_backward_and_instantiation_warning():
    assert_same_error("""
class NoBack(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()
NoBack.apply(torch.ones(2, requires_grad=True)).sum().backward()
""")
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        type("Sq", (gradwalk.autograd.Function,), {})()


def test_gradients_match_a_numerical_check():
    class Softplus(gradwalk.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (x.exp() + 1).log()

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.sigmoid()

    x = gradwalk.tensor(np.linspace(-2, 2, 5), dtype=gradwalk.float64, requires_grad=True)
    assert gradwalk.autograd.gradcheck(Softplus.apply, (x,))
    assert torch.autograd.gradcheck(torch.nn.functional.softplus,
                                    (torch.tensor(np.linspace(-2, 2, 5), requires_grad=True),))
