"""Fuzzing the snippet interpreter: whatever text or syntax tree it is given, it either returns a
JSON-ready result or raises its own ``SnippetError``; never anything else."""
import ast
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradwalk.lab.interpreter import TENSOR_METHODS, TORCH_FUNCTIONS, run_snippet
from gradwalk.lab.limits import DEFAULT_LIMITS, SnippetError

# small limits so that every example is quick, in this process
SMALL = DEFAULT_LIMITS.but(tensor_elements=64, total_elements=4000, graph_nodes=200,
                           matmul_flops=20_000, statements=30, print_chars=2000)
PREAMBLE = ("x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)\n"
            "w = torch.tensor(0.5, requires_grad=True)\n")
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def runs_or_refuses(source):
    """The property: a result that JSON can carry, or a SnippetError with a message."""
    for mode in ("pytorch", "topo"):
        try:
            result = run_snippet(source, mode, SMALL)
        except SnippetError as error:
            assert error.message and isinstance(error.to_dict(), dict)
            return
        json.dumps(result, allow_nan=False)
        assert set(result) >= {"ok", "leaves", "values", "passes", "prints", "error"}


# ---------------------------------------------------------------- text

TOKENS = ["x", "w", "y", "z", "torch", "F", "print", "os", "__class__", "_x", "=", "+", "-", "*",
          "/", "**", "@", "%", "(", ")", "[", "]", ",", ".", ":", "\n", "1", "0", "2.5", "-3",
          "1e308", "10**10", "'s'", "True", "None", "requires_grad=True", "retain_graph=True",
          "torch.tensor(", "torch.tanh(", "torch.autograd.grad(", ".backward()", ".grad",
          ".grad_fn", ".next_functions", ".sum()", "F.mse_loss(", "import", "lambda", "for",
          "while", "if", "not", "#", "\\", '"""', "\t", " "]


@FUZZ
@given(st.text(max_size=300))
def test_any_text(source):
    runs_or_refuses(source)


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=60).map("".join))
def test_token_soup(source):
    runs_or_refuses(PREAMBLE + source)


# ---------------------------------------------------------------- syntax trees

NAMES = ["x", "w", "y", "z", "torch", "F", "print", "open"]
ATTRIBUTES = sorted(TENSOR_METHODS)[::3] + sorted(TORCH_FUNCTIONS)[::3] + [
    "grad", "grad_fn", "shape", "T", "next_functions", "autograd", "float64", "backward",
    "__class__", "numpy", "load", "system"]
BINARY = [ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.MatMult, ast.Mod, ast.LShift,
          ast.FloorDiv]
UNARY = [ast.USub, ast.UAdd, ast.Not, ast.Invert]

numbers = st.one_of(st.integers(-5, 5), st.floats(-10, 10, allow_nan=False),
                    st.sampled_from([0, 1, 2, 10, 64, 1e308, -1e-3]))
constants = st.one_of(numbers, st.sampled_from([True, None, "s", "sum"])).map(ast.Constant)
names = st.sampled_from(NAMES).map(lambda n: ast.Name(n, ast.Load()))
nested_data = st.recursive(numbers, lambda inner: st.lists(inner, min_size=1, max_size=3),
                           max_leaves=8)


def _literal(value):
    return ast.parse(repr(value), mode="eval").body


def _tensor_call(data, requires_grad):
    return ast.Call(ast.Attribute(ast.Name("torch", ast.Load()), "tensor", ast.Load()),
                    [_literal(data)],
                    [ast.keyword("requires_grad", ast.Constant(requires_grad))])


tensors = st.builds(_tensor_call, nested_data, st.booleans())
keywords = st.lists(st.builds(ast.keyword, st.sampled_from(
    ["requires_grad", "retain_graph", "dim", "keepdim", "create_graph", "reduction"]),
    constants), max_size=2)


def _extend(inner):
    return st.one_of(
        st.builds(ast.BinOp, inner, st.sampled_from(BINARY).map(lambda op: op()), inner),
        st.builds(ast.UnaryOp, st.sampled_from(UNARY).map(lambda op: op()), inner),
        st.builds(ast.Attribute, inner, st.sampled_from(ATTRIBUTES), st.just(ast.Load())),
        st.builds(lambda f, a, args, kw: ast.Call(ast.Attribute(f, a, ast.Load()), args, kw),
                  inner, st.sampled_from(ATTRIBUTES), st.lists(inner, max_size=2), keywords),
        st.builds(ast.Call, names, st.lists(inner, max_size=2), keywords),
        st.builds(ast.Subscript, inner, st.one_of(st.integers(-3, 3).map(ast.Constant), inner),
                  st.just(ast.Load())),
        st.builds(ast.List, st.lists(inner, max_size=3), st.just(ast.Load())),
        st.builds(ast.Tuple, st.lists(inner, min_size=1, max_size=3), st.just(ast.Load())),
        st.builds(ast.Compare, inner, st.just([ast.Lt()]), st.lists(inner, min_size=1, max_size=1)),
    )


expressions = st.recursive(st.one_of(constants, names, tensors), _extend, max_leaves=12)
statements = st.one_of(
    st.builds(lambda t, v: ast.Assign([ast.Name(t, ast.Store())], v),
              st.sampled_from(["x", "y", "z", "g", "_private"]), expressions),
    st.builds(ast.Expr, expressions),
    st.builds(lambda target, kw: ast.Expr(ast.Call(
        ast.Attribute(target, "backward", ast.Load()), [], kw)), expressions, keywords),
    st.builds(lambda a, b: ast.Expr(ast.Call(
        _literal_path("torch.autograd.grad"), [a, b], [])), expressions, expressions),
    st.sampled_from([ast.Import([ast.alias("os")]), ast.Import([ast.alias("torch")]),
                     ast.Pass()]),
    st.builds(lambda t, op, v: ast.AugAssign(t, op(), v),
              st.sampled_from(["x", "w", "y", "x.grad", "w.data", "x.shape"]).map(
                  lambda t: ast.parse(t, mode="eval").body),
              st.sampled_from(BINARY), expressions),
)


def _block(inner):
    """``with torch.no_grad():``, ``for _ in range(k):`` (some k too large or not literal)
    and other with/for statements around generated bodies."""
    body = st.lists(inner, min_size=1, max_size=3)
    withs = st.sampled_from(["torch.no_grad()", "torch.enable_grad()", "open('f')",
                             "torch.no_grad"]).map(lambda e: ast.parse(e, mode="eval").body)
    ranges = st.sampled_from(["range(3)", "range(0)", "range(-2, 2)", "range(1, 9, 3)",
                              "range(10**9)", "range(1001)", "[1, 2]", "range(x)"]).map(
        lambda e: ast.parse(e, mode="eval").body)
    return st.one_of(
        st.builds(lambda e, b: ast.With([ast.withitem(e)], b), withs, body),
        st.builds(lambda t, r, b: ast.For(ast.Name(t, ast.Store()), r, b, []),
                  st.sampled_from(["_", "i", "x"]), ranges, body))


statements = st.recursive(statements, _block, max_leaves=6)


def _literal_path(path):
    return ast.parse(path, mode="eval").body


@FUZZ
@given(st.lists(statements, min_size=1, max_size=8))
def test_generated_syntax_trees(body):
    module = ast.fix_missing_locations(ast.Module(body=body, type_ignores=[]))
    source = ast.unparse(module)  # the interpreter only ever sees text, as from the page
    runs_or_refuses(PREAMBLE + source)


def test_the_fuzzers_reach_the_engine():
    """A sanity check on the strategies' neighbourhood: a generated-looking snippet runs."""
    source = PREAMBLE + "y = (x * w).sum()\ny.backward(retain_graph=True)\ny.backward()\n"
    result = run_snippet(source, "pytorch", SMALL)
    assert result["ok"] and len(result["passes"]) == 2
    loop = PREAMBLE + ("for _ in range(3):\n    y = (x * w).sum()\n    y.backward()\n"
                       "    with torch.no_grad():\n        w -= 0.1 * w.grad\n")
    result = run_snippet(loop, "pytorch", SMALL)
    assert result["ok"] and len(result["passes"]) == 3
