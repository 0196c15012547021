"""The lab's snippet language: a small part of Python, run by walking its syntax tree.

    >>> result = run_snippet('''
    ... w = torch.tensor(0.5, requires_grad=True)
    ... y = torch.tanh(w * 2.0)
    ... y.backward()
    ... ''')
    >>> result["ok"], result["leaves"][0]["grad"]["data"]
    (True, 0.839948...)

User text is parsed with ``ast.parse`` and never given to ``exec``, ``eval`` or ``compile``.
The tree is checked twice: first every node's *kind* against a whitelist (no imports, loops,
lambdas, comprehensions, comparisons, f-strings, names or attributes with a leading
underscore...), then, while it runs, every attribute and call against the lab's lists of torch
functions, ``F`` functions and tensor methods. The only values a snippet can ever hold are
numbers, strings, None, lists/tuples of those, gradwalk tensors, graph nodes (read-only), dtypes
and the ``torch``/``F`` namespaces below, so there is no path to Python's internals.

A snippet the lab will not run raises ``SnippetError`` (with line and column). An error the
snippet itself raises, as it would under PyTorch (a shape mismatch, backward through a freed
graph), is part of the result: ``result["error"]`` or the pass's ``"error"``.

Each ``.backward()`` / ``torch.autograd.grad(...)`` call is one *pass*, stepped through the real
engine by ``gradwalk.autograd.stepper``; the result follows docs/lab-api.md.
"""
import ast
import math
import re
import operator
import warnings

import numpy as np

import gradwalk
from gradwalk.autograd import node as _node
from gradwalk.autograd.node import Node
from gradwalk.autograd.stepper import tensor_json, watch_backward
from gradwalk.tensor import Tensor

from .limits import (DEFAULT_LIMITS, Budget, LimitError, SnippetError, SnippetSyntaxError,
                     check_int, check_int_power, check_sequence_start, check_source_text)

# ---------------------------------------------------------------- what a snippet may use

TORCH_FUNCTIONS = frozenset("""
    tensor ones zeros ones_like zeros_like full randn rand arange linspace manual_seed
    tanh exp log sin cos tan sigmoid relu sqrt rsqrt abs neg square reciprocal log1p expm1 sign
    sum mean prod max min amax amin norm logsumexp softmax log_softmax
    add sub mul div pow maximum minimum clamp
    matmul mm mv dot outer cat stack
    reshape transpose t unsqueeze squeeze flatten
""".split())
TORCH_DTYPES = frozenset("float32 float64 float double int64 long".split())
AUTOGRAD_FUNCTIONS = frozenset({"grad", "backward"})
F_FUNCTIONS = frozenset("""
    mse_loss l1_loss cross_entropy nll_loss binary_cross_entropy binary_cross_entropy_with_logits
    relu sigmoid tanh softmax log_softmax linear
""".split())
TENSOR_METHODS = frozenset("""
    backward retain_grad detach item size dim numel zero_
    tanh exp log sin cos tan sigmoid relu sqrt rsqrt abs neg square reciprocal log1p expm1 sign
    sum mean prod max min amax amin norm logsumexp softmax log_softmax
    add sub mul div pow maximum minimum clamp
    matmul mm mv dot outer
    reshape view transpose t unsqueeze squeeze flatten expand repeat
    add_ sub_ mul_ div_ exp_ tanh_ sigmoid_ relu_
""".split())
TENSOR_ATTRIBUTES = frozenset("grad grad_fn shape T data requires_grad is_leaf dtype ndim".split())
NODE_ATTRIBUTES = frozenset({"next_functions", "variable"})
NODE_METHODS = frozenset({"name"})
# imports a pasted PyTorch snippet starts with; they are accepted and do nothing
HARMLESS_IMPORTS = {("torch", None), ("torch.nn.functional", "F")}

GRAD_MODES = frozenset({"no_grad", "enable_grad"})  # with torch.no_grad(): ...
AUG_TARGETS = frozenset({"grad", "data"})  # w.data -= 0.1 * w.grad

ALLOWED = ("A snippet may use: assignments to names; numbers and strings; "
           "torch.tensor(number or nested list, requires_grad=True, dtype=torch.float64); "
           "+ - * / ** @ and unary minus; augmented assignment (x += 1, w.data -= 0.1 * w.grad); "
           "calls of torch.<function>, F.<function> and tensor methods from the lab's list; "
           "x.grad and x.grad_fn; simple indexing x[0]; .backward(retain_graph=...); "
           "torch.autograd.grad(...); with torch.no_grad(): / with torch.enable_grad(): blocks; "
           "for _ in range(k): loops with k a whole number written out (at most "
           "Limits.loop_iterations); print(...); pass; comments.")

_INPLACE = {ast.Add: operator.iadd, ast.Sub: operator.isub, ast.Mult: operator.imul,
            ast.Div: operator.itruediv, ast.Pow: operator.ipow, ast.MatMult: operator.imatmul}
_BINARY = {ast.Add: ("+", operator.add), ast.Sub: ("-", operator.sub),
           ast.Mult: ("*", operator.mul), ast.Div: ("/", operator.truediv),
           ast.Pow: ("**", operator.pow), ast.MatMult: ("@", operator.matmul)}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}

# Node kinds that may appear at all; each is checked further where it is evaluated.
_ALLOWED_NODES = (ast.Module, ast.Expr, ast.Assign, ast.Name, ast.Constant, ast.BinOp,
                  ast.UnaryOp, ast.Call, ast.keyword, ast.Attribute, ast.List, ast.Tuple,
                  ast.Subscript, ast.Slice, ast.Load, ast.Store, ast.Import, ast.ImportFrom,
                  ast.alias, ast.With, ast.withitem, ast.AugAssign, ast.For, ast.Pass,
                  *_BINARY, *_UNARY)

_FORBIDDEN = {  # what we tell the user when they use one of these
    ast.AsyncFor: "loops (async for)", ast.While: "loops (while)",
    ast.Break: "break", ast.Continue: "continue", ast.AsyncWith: "async with",
    ast.FunctionDef: "function definitions (def)", ast.AsyncFunctionDef: "function definitions",
    ast.ClassDef: "class definitions", ast.Lambda: "lambda", ast.If: "if statements",
    ast.IfExp: "conditional expressions", ast.Try: "try blocks",
    ast.ListComp: "comprehensions", ast.SetComp: "comprehensions", ast.DictComp: "comprehensions",
    ast.GeneratorExp: "generator expressions", ast.Compare: "comparisons",
    ast.BoolOp: "and/or",
    ast.JoinedStr: "f-strings", ast.Dict: "dicts", ast.Set: "sets", ast.Starred: "* unpacking",
    ast.Global: "global", ast.Nonlocal: "nonlocal", ast.Delete: "del", ast.Return: "return",
    ast.Raise: "raise", ast.Assert: "assert", ast.Yield: "yield", ast.Await: "await",
    ast.NamedExpr: "the walrus operator :=", ast.AnnAssign: "annotated assignments",
}


class Namespace:
    """``torch``, ``torch.autograd`` or ``F`` as a snippet sees them: only whitelisted names."""

    def __init__(self, path, functions, resolve, dtypes=(), children=None):
        self.path = path
        self.functions = functions
        self.resolve = resolve  # name -> the real callable
        self.dtypes = dtypes
        self.children = children or {}

    def __repr__(self):
        return f"<module '{self.path}'>"


def _functional(name):
    try:
        from gradwalk.nn import functional
    except ImportError:  # before gradwalk.nn exists, the same ops are in gradwalk.ops
        functional = None
    if functional is not None and hasattr(functional, name):
        return getattr(functional, name)
    from gradwalk.ops import activation

    return getattr(activation, name, None) or getattr(gradwalk, name)


AUTOGRAD = Namespace("torch.autograd", AUTOGRAD_FUNCTIONS, lambda n: getattr(gradwalk.autograd, n))
TORCH = Namespace("torch", TORCH_FUNCTIONS, lambda n: getattr(gradwalk, n), TORCH_DTYPES,
                  {"autograd": AUTOGRAD})
FUNCTIONAL = Namespace("torch.nn.functional", F_FUNCTIONS, _functional)


class _Raised(Exception):
    """The snippet raised ``error`` (a user-visible error) at ``node``; stops the run."""

    def __init__(self, error, node, in_pass=False):
        super().__init__(str(error))
        self.error = error
        self.node = node
        self.in_pass = in_pass  # already reported in the pass's own "error"


# ---------------------------------------------------------------- parsing and checking

def parse(source, limits=DEFAULT_LIMITS):
    """Parse and check a snippet; returns the ``ast.Module`` or raises ``SnippetError``."""
    if not isinstance(source, str):
        raise SnippetError("the snippet must be text")
    check_source_text(source, limits)
    try:
        with warnings.catch_warnings():  # "invalid escape sequence" and such: not our output
            warnings.simplefilter("ignore")
            tree = ast.parse(source, mode="exec")
    except SyntaxError as e:
        raise SnippetSyntaxError(e.msg or "invalid syntax", e.lineno, e.offset) from None
    except ValueError:  # null bytes
        raise SnippetSyntaxError("source code cannot contain null bytes") from None
    except (RecursionError, MemoryError):  # Python's parser recurses on nesting
        raise LimitError("the snippet is nested too deeply to parse") from None
    statements = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]  # blocks' too
    if len(statements) > limits.statements:
        extra = statements[limits.statements]
        raise LimitError.at(extra, f"the snippet has {len(statements)} statements; the limit is "
                                   f"{limits.statements}")
    check_tree(tree, limits)
    return tree


def check_tree(tree, limits=DEFAULT_LIMITS):
    """Every node's kind is allowed and the tree is not too deep (iterative walk)."""
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limits.nesting:
            raise LimitError.at(node, f"the expression is nested more than {limits.nesting} "
                                      f"levels deep")
        _check_node(node, limits)
        for child in ast.iter_child_nodes(node):
            stack.append((child, depth + 1))


def _check_node(node, limits=DEFAULT_LIMITS):
    if not isinstance(node, _ALLOWED_NODES):
        what = _FORBIDDEN.get(type(node))
        if what is None:
            what = f"this construct ({type(node).__name__})"
        raise SnippetError.at(node, f"{what} not allowed here. {ALLOWED}")
    if isinstance(node, ast.Name) and node.id.startswith("_") and node.id != "_":
        raise SnippetError.at(node, f"names starting with '_' are not allowed ({node.id}). "
                                    f"{ALLOWED}")
    if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
        raise SnippetError.at(node, f"attributes starting with '_' are not allowed "
                                    f"(.{node.attr}). {ALLOWED}")
    if isinstance(node, ast.Constant) and not (
            node.value is None or type(node.value) in (bool, int, float, str)):
        raise SnippetError.at(node, f"this constant ({type(node.value).__name__}) is not "
                                    f"allowed; numbers, strings, True/False and None are")
    if isinstance(node, ast.keyword) and node.arg is None:
        raise SnippetError.at(node, "** unpacking is not allowed")
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        _check_import(node)
    if isinstance(node, ast.Assign):
        for target in node.targets:
            _check_target(target)
    if isinstance(node, ast.AugAssign):
        _check_aug_target(node)
    if isinstance(node, ast.With):
        _check_with(node)
    if isinstance(node, ast.For):
        _check_for(node, limits)


def _check_aug_target(node):
    if type(node.op) not in _INPLACE:
        raise SnippetError.at(node, f"augmented assignment works with += -= *= /= **= @=, "
                                    f"not {type(node.op).__name__}. {ALLOWED}")
    target = node.target
    if isinstance(target, ast.Name) or (
            isinstance(target, ast.Attribute) and target.attr in AUG_TARGETS):
        return
    raise SnippetError.at(target, "augmented assignment (+= etc.) works on a name (x += 1), "
                                  "on x.grad and on x.data, nothing else")


def _check_with(node):
    """``with torch.no_grad():`` or ``with torch.enable_grad():``, nothing else."""
    item = node.items[0] if len(node.items) == 1 else None
    call = item.context_expr if item is not None else None
    if (item is None or item.optional_vars is not None or not isinstance(call, ast.Call)
            or call.args or call.keywords or not isinstance(call.func, ast.Attribute)
            or not isinstance(call.func.value, ast.Name) or call.func.value.id != "torch"
            or call.func.attr not in GRAD_MODES):
        raise SnippetError.at(node, "with blocks here are `with torch.no_grad():` and "
                                    "`with torch.enable_grad():` (one of them, without `as`)")


def _check_for(node, limits):
    """``for _ in range(k):`` with k (and a start and step, if given) whole numbers written
    out, at most ``limits.loop_iterations`` rounds; no ``else``."""
    iterator = node.iter
    usage = (f"loops here are `for _ in range(k):` with k a whole number written out, at most "
             f"{limits.loop_iterations:,}")
    if not isinstance(node.target, ast.Name) or node.orelse:
        raise SnippetError.at(node, usage)
    if not (isinstance(iterator, ast.Call) and isinstance(iterator.func, ast.Name)
            and iterator.func.id == "range" and 1 <= len(iterator.args) <= 3
            and not iterator.keywords and all(_literal_int(a) is not None for a in iterator.args)):
        raise SnippetError.at(node, usage)
    bounds = [_literal_int(a) for a in iterator.args]
    if bounds[2:] == [0]:
        raise SnippetError.at(iterator, "range() arg 3 must not be zero")
    rounds = len(range(*bounds))
    if rounds > limits.loop_iterations:
        raise LimitError.at(iterator, f"this loop would run {rounds:,} times; loops are "
                                      f"limited to {limits.loop_iterations:,} rounds")


def _literal_int(node):
    """The int a node writes out (``3``, ``-3``), else None."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node, sign = node.operand, -1
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    return None


def _check_import(node):
    if isinstance(node, ast.Import) and all(
            (alias.name, alias.asname) in HARMLESS_IMPORTS for alias in node.names):
        return
    if isinstance(node, ast.ImportFrom) and node.module == "torch.nn" and node.level == 0 and all(
            (alias.name, alias.asname) == ("functional", "F") for alias in node.names):
        return
    raise SnippetError.at(node, "imports are not allowed: torch and F (torch.nn.functional) are "
                                "already there, so only `import torch` and `import "
                                "torch.nn.functional as F` are accepted")


def _check_target(target):
    if isinstance(target, ast.Name):
        return
    if isinstance(target, (ast.Tuple, ast.List)) and all(
            isinstance(t, ast.Name) for t in target.elts):
        return
    if isinstance(target, ast.Attribute) and target.attr == "grad":
        return
    raise SnippetError.at(target, "you can assign to names (y = ...), to several names "
                                  "(gx, gy = ...) and to x.grad, nothing else")


# ---------------------------------------------------------------- running

# The most "earlier_passes" a request may ask for (each is one more run of the snippet).
EARLIER_PASSES_LIMIT = 50


def run_snippet(source, mode="pytorch", limits=DEFAULT_LIMITS, sequence_start=0,
                earlier_passes=0):
    """Run a snippet; returns the response of docs/lab-api.md or raises ``SnippetError``.
    ``sequence_start``: the sequence counter's value when the snippet starts (0: a fresh
    Python); the answer's ``next_sequence_nr`` is its value at the end.
    ``earlier_passes``: how many times the snippet's forward and backward ran before, on the
    same leaves (the page's "New forward pass"): the snippet is run that many times first, and
    each leaf starts this run with the ``.grad`` those runs left, which backward() adds into,
    as in PyTorch. Each leaf's ``grad_before`` in the answer is that starting ``.grad``."""
    if mode not in ("pytorch", "topo"):
        raise SnippetError(f"mode must be 'pytorch' or 'topo', not {mode!r}")
    check_sequence_start(sequence_start, limits)
    if type(earlier_passes) is not int or earlier_passes < 0:
        raise SnippetError(f'"earlier_passes" must be a non-negative integer, not '
                           f'{earlier_passes!r}')
    if earlier_passes > EARLIER_PASSES_LIMIT:
        raise LimitError(f'"earlier_passes" is {earlier_passes:,}; the limit is '
                         f'{EARLIER_PASSES_LIMIT} (press Run to start .grad from None again)')
    tree = parse(source, limits)
    grads = None
    for _ in range(earlier_passes):
        earlier = Interpreter(source, mode, limits, sequence_start, grads_before=grads)
        earlier.run(tree)
        grads = {name: t.grad for name, t in earlier.leaves}
    return Interpreter(source, mode, limits, sequence_start, grads_before=grads).run(tree)


class Interpreter:
    """Walks one checked tree, statement by statement, in a fresh namespace."""

    # What a snippet's ``torch`` is: gradwalk here. compare.py's subclass runs the same
    # snippet, under the same whitelist, on real PyTorch by swapping these four.
    library = gradwalk
    Tensor = Tensor
    Node = Node
    namespaces = {"torch": TORCH, "F": FUNCTIONAL}

    def __init__(self, source, mode="pytorch", limits=DEFAULT_LIMITS, sequence_start=0,
                 grads_before=None):
        # grads_before: {leaf name: .grad} from earlier runs (run_snippet's earlier_passes), or
        # None for a fresh run; a leaf gets its .grad when its name is first bound.
        self.grads_before = grads_before
        self.source = Source(source)
        self.mode = mode
        self.limits = limits
        self.sequence_start = sequence_start
        self.budget = Budget(limits)
        self.env = dict(self.namespaces)
        self.leaves = []  # (name, tensor) in the order they were first named
        self.values = []  # {"name", "line", "tensor"} for each non-leaf tensor assigned
        self.value_index = {}  # (name, line) -> its index in values
        self.labels = {}  # id(tensor) -> (label, tensor): names for the graph's nodes
        self.passes = []
        self.prints = []
        self.printed_chars = 0
        self.executed = 0  # statements run, each round of a loop counted

    def run(self, tree):
        # Each request is a fresh "process": sequence numbers start at 0, as in a new Python,
        # or where the request says (the page's "New forward pass": PyTorch's thread-local
        # counter keeps growing from one graph to the next).
        _node._sequence.value = self.sequence_start
        self.library.manual_seed(0)
        error = None
        with self.library.enable_grad():
            try:
                self.execute_block(tree.body)
            except _Raised as raised:
                error = raised
            except MemoryError:
                error = LimitError("the snippet ran out of memory (limit "
                                   f"{self.limits.memory_bytes // 2**20} MiB)")
                error.out_of_memory = True  # its worker is replaced after answering
                raise error from None
            except RecursionError:
                raise LimitError("the snippet is nested too deeply") from None
        return self.result(error)

    def nodes_created(self):
        """Backward nodes the snippet has created so far (each took a sequence number)."""
        return _node.peek_sequence_nr() - self.sequence_start

    # ------------------------------------------------------------ statements
    def execute_block(self, statements):
        for statement in statements:
            self.executed += 1  # a loop's body counts once per round
            if self.executed > self.limits.executed_statements:
                raise LimitError.at(statement, f"the snippet ran more than "
                                               f"{self.limits.executed_statements:,} statements "
                                               f"(loops count each round)")
            self.execute(statement)
            self.budget.check_nodes(self.nodes_created(), statement)

    def execute(self, statement):
        if isinstance(statement, (ast.Import, ast.ImportFrom, ast.Pass)):
            return  # checked: only the harmless imports get here
        if isinstance(statement, ast.Expr):
            self.evaluate(statement.value)
            return
        if isinstance(statement, ast.AugAssign):
            return self.augmented_assign(statement)
        if isinstance(statement, ast.With):
            return self.with_block(statement)
        if isinstance(statement, ast.For):
            return self.for_loop(statement)
        # ast.Assign (the only other statement check_tree lets through)
        value = self.evaluate(statement.value)
        for target in statement.targets:
            self.assign(target, value, statement)

    def assign(self, target, value, statement):
        if isinstance(target, ast.Name):
            self.bind(target.id, value, statement)
        elif isinstance(target, ast.Attribute):  # x.grad = ...
            owner = self.evaluate(target.value)
            if not isinstance(owner, self.Tensor):
                raise SnippetError.at(target, "only a tensor's .grad can be assigned")
            if value is not None and not isinstance(value, self.Tensor):
                raise SnippetError.at(target, ".grad can be set to None or a tensor")
            self.guarded(target, lambda: setattr(owner, "grad", value))
        else:
            if not isinstance(value, (tuple, list)):
                self.user_error(target, TypeError(
                    f"cannot unpack non-iterable {_type_name(value)} object"))
            if len(value) != len(target.elts):
                self.user_error(target, ValueError(
                    f"not enough values to unpack (expected {len(target.elts)}, got {len(value)})"
                    if len(value) < len(target.elts) else
                    f"too many values to unpack (expected {len(target.elts)})"))
            for name, item in zip(target.elts, value):
                self.bind(name.id, item, statement)

    def augmented_assign(self, statement):
        """``x += 1`` is ``x = x.__iadd__(1)``: in place on a tensor (PyTorch's in-place
        checks apply: a leaf that requires grad, a saved tensor's version), a new value for a
        number; ``w.data -= ...`` and ``w.grad -= ...`` write the attribute back."""
        target = statement.target
        current = self.evaluate(target)  # a Name or x.grad / x.data, read as a value
        value = self.evaluate(statement.value)
        symbol = _BINARY[type(statement.op)][0] + "="
        for side in (current, value):
            if not _is_number(side) and not isinstance(side, self.Tensor):
                raise SnippetError.at(statement, f"{symbol} works on numbers and tensors, not "
                                                 f"on {_type_name(side)}")
        op = _INPLACE[type(statement.op)]
        if isinstance(current, self.Tensor) or isinstance(value, self.Tensor):
            self.check_elementwise(statement, current, value, matmul=symbol == "@=")
            result = self.produce(statement, lambda: op(current, value))
        else:
            if symbol == "**=":
                check_int_power(current, value, self.limits, statement)
            if symbol == "@=":
                self.user_error(statement, TypeError(
                    f"unsupported operand type(s) for @=: '{_type_name(current)}' and "
                    f"'{_type_name(value)}'"))
            result = self.guarded(statement, lambda: op(current, value))
            check_int(result, self.limits, statement)
            if isinstance(result, complex):
                self.user_error(statement, ValueError("the result is a complex number, which "
                                                      "the lab does not support"))
        if isinstance(target, ast.Name):
            self.bind(target.id, result, statement)
        else:
            owner = self.evaluate(target.value)
            if target.attr == "data" and not isinstance(result, self.Tensor):
                raise SnippetError.at(target, ".data can be set to a tensor")
            self.guarded(target, lambda: setattr(owner, target.attr, result))

    def with_block(self, statement):
        """``with torch.no_grad():`` / ``with torch.enable_grad():`` (checked by parse)."""
        call = statement.items[0].context_expr
        owner = self.evaluate(call.func.value)
        if owner is not self.namespaces["torch"]:
            raise SnippetError.at(call, "torch here must be the torch module")
        with getattr(self.library, call.func.attr)():
            self.execute_block(statement.body)

    def for_loop(self, statement):
        """``for i in range(k):`` (bounds checked by parse; each round's statements count
        against ``executed_statements``, and what they make against the other limits)."""
        bounds = [_literal_int(a) for a in statement.iter.args]
        for i in range(*bounds):
            self.bind(statement.target.id, i, statement)
            self.execute_block(statement.body)

    def bind(self, name, value, statement):
        self.env[name] = value
        if not isinstance(value, self.Tensor):
            return
        self.labels[id(value)] = (name, value)
        if value.is_leaf and value.requires_grad:
            if all(t is not value for _, t in self.leaves):
                if self.grads_before and self.grads_before.get(name) is not None \
                        and all(n != name for n, _ in self.leaves):
                    value.grad = self.grads_before[name].detach().clone()
                self.leaves.append((name, value))
        else:
            # one entry per name and line: a loop's rounds (and y += 1) show the latest value
            key = (name, statement.lineno)
            if key in self.value_index:
                self.values[self.value_index[key]]["tensor"] = value
            else:
                self.value_index[key] = len(self.values)
                self.values.append({"name": name, "line": statement.lineno, "tensor": value})

    # ------------------------------------------------------------ expressions
    def evaluate(self, node):
        if isinstance(node, ast.Constant):
            check_int(node.value, self.limits, node)
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in self.env:
                self.user_error(node, NameError(f"name '{node.id}' is not defined"))
            return self.env[node.id]
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [self.evaluate(e) for e in node.elts]
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.BinOp):
            return self.binary(node)
        if isinstance(node, ast.UnaryOp):
            return self.unary(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        raise SnippetError.at(node, f"{type(node).__name__} is not allowed here. {ALLOWED}")

    def binary(self, node):
        symbol, op = _BINARY[type(node.op)]
        left, right = self.evaluate(node.left), self.evaluate(node.right)
        for side in (left, right):
            if not _is_number(side) and not isinstance(side, self.Tensor):
                raise SnippetError.at(node, f"{symbol} works on numbers and tensors, not on "
                                            f"{_type_name(side)}")
        if isinstance(left, self.Tensor) or isinstance(right, self.Tensor):
            self.check_elementwise(node, left, right, matmul=symbol == "@")
            return self.produce(node, lambda: op(left, right))
        if symbol == "**":
            check_int_power(left, right, self.limits, node)
        if symbol == "@":
            self.user_error(node, TypeError(
                f"unsupported operand type(s) for @: '{_type_name(left)}' and '{_type_name(right)}'"))
        value = self.guarded(node, lambda: op(left, right))
        check_int(value, self.limits, node)
        if isinstance(value, complex):  # (-8) ** 0.5
            self.user_error(node, ValueError("the result is a complex number, which the lab "
                                             "does not support"))
        return value

    def unary(self, node):
        operand = self.evaluate(node.operand)
        if not _is_number(operand) and not isinstance(operand, self.Tensor):
            raise SnippetError.at(node, f"unary minus works on numbers and tensors, not on "
                                        f"{_type_name(operand)}")
        op = _UNARY[type(node.op)]
        if isinstance(operand, self.Tensor):
            return self.produce(node, lambda: op(operand))
        return self.guarded(node, lambda: op(operand))

    def attribute(self, node):
        owner = self.evaluate(node.value)
        name = node.attr
        if isinstance(owner, Namespace):
            if name in owner.children:
                return owner.children[name]
            if name in owner.dtypes:
                return owner.resolve(name)
            if name in owner.functions:
                raise SnippetError.at(node, f"{owner.path}.{name} must be called: "
                                            f"{owner.path}.{name}(...)")
            raise SnippetError.at(node, f"{owner.path}.{name} is not in the lab's list. "
                                        f"{_namespace_help(owner)}")
        if isinstance(owner, self.Tensor):
            if name in TENSOR_ATTRIBUTES:
                return self.guarded(node, lambda: getattr(owner, name))
            if name in TENSOR_METHODS:
                raise SnippetError.at(node, f".{name} is a method: call it, .{name}(...)")
            raise SnippetError.at(node, f"tensors here have the attributes "
                                        f"{_listing(TENSOR_ATTRIBUTES)} and the methods "
                                        f"{_listing(TENSOR_METHODS)}; not .{name}")
        if isinstance(owner, self.Node):
            if name == "variable" and not hasattr(owner, "variable"):
                raise SnippetError.at(node, f"{type(owner).__name__} has no .variable (only "
                                            f"AccumulateGrad does)")
            if name in NODE_ATTRIBUTES:
                return getattr(owner, name)
            raise SnippetError.at(node, f"graph nodes here have .next_functions, .variable "
                                        f"and .name(); not .{name}")
        raise SnippetError.at(node, f"{_type_name(owner)} has no attributes a snippet may use "
                                    f"(.{name})")

    def subscript(self, node):
        owner = self.evaluate(node.value)
        index = self.index(node.slice)
        if not isinstance(owner, (self.Tensor, tuple, list)):
            raise SnippetError.at(node, f"only tensors, lists and tuples can be indexed, not "
                                        f"{_type_name(owner)}")
        if isinstance(owner, self.Tensor):
            return self.produce(node, lambda: owner[index])
        if isinstance(index, tuple):
            self.user_error(node, TypeError(f"{type(owner).__name__} indices must be integers or "
                                            f"slices, not tuple"))
        return self.guarded(node, lambda: owner[index])

    def index(self, node):
        """Simple indexing only: integers, slices of integers, and tuples of those."""
        if isinstance(node, ast.Slice):
            parts = [None if p is None else self.evaluate(p)
                     for p in (node.lower, node.upper, node.step)]
            for p in parts:
                if p is not None and not _is_int(p):
                    raise SnippetError.at(node, "slice bounds must be integers (x[1:3])")
            return slice(*parts)
        if isinstance(node, ast.Tuple):
            return tuple(self.index(e) for e in node.elts)
        value = self.evaluate(node)
        if not _is_int(value):
            raise SnippetError.at(node, "indices must be integers or slices of integers "
                                        "(x[0], x[1:3], x[0, 1])")
        return value

    # ------------------------------------------------------------ calls
    def call(self, node):
        func = node.func
        if isinstance(func, ast.Name):
            if func.id != "print" or "print" in self.env:
                raise SnippetError.at(node, f"{func.id}(...) is not allowed; the only plain "
                                            f"function is print(...). {ALLOWED}")
            return self.print_(node)
        if not isinstance(func, ast.Attribute):
            raise SnippetError.at(node, f"only named functions and methods can be called. "
                                        f"{ALLOWED}")
        owner = self.evaluate(func.value)
        name = func.attr
        self.check_callable(node, owner, name)  # before the arguments run
        args = [self.evaluate(a) for a in node.args]
        kwargs = {k.arg: self.evaluate(k.value) for k in node.keywords}
        if isinstance(owner, Namespace):
            return self.call_function(node, owner, name, args, kwargs)
        if isinstance(owner, self.Tensor):
            return self.call_method(node, owner, name, args, kwargs)
        return self.guarded(node, lambda: getattr(owner, name)(*args, **kwargs))  # node.name()

    def check_callable(self, node, owner, name):
        if isinstance(owner, Namespace):
            if name not in owner.functions:
                raise SnippetError.at(node, f"{owner.path}.{name} is not in the lab's list. "
                                            f"{_namespace_help(owner)}")
        elif isinstance(owner, self.Tensor):
            if name not in TENSOR_METHODS:
                raise SnippetError.at(node, f".{name}() is not in the lab's list of tensor "
                                            f"methods: {_listing(TENSOR_METHODS)}")
        elif not (isinstance(owner, self.Node) and name in NODE_METHODS):
            raise SnippetError.at(node, f"{_type_name(owner)} has no methods a snippet may call "
                                        f"(.{name}). {ALLOWED}")

    def call_function(self, node, namespace, name, args, kwargs):
        if namespace.path == "torch.autograd":
            function = namespace.resolve(name)
            return self.run_pass(node, lambda: function(*args, **kwargs))
        if namespace.path == "torch" and name == "tensor":
            return self.make_tensor(node, args, kwargs)
        self.check_call_size(node, name, args, kwargs)
        function = namespace.resolve(name)
        return self.produce(node, lambda: function(*args, **kwargs))

    def call_method(self, node, tensor, name, args, kwargs):
        if name == "backward":
            return self.run_pass(node, lambda: tensor.backward(*args, **kwargs))
        self.check_call_size(node, name, [tensor, *args], kwargs)
        method = getattr(tensor, name)
        return self.produce(node, lambda: method(*args, **kwargs))

    def make_tensor(self, node, args, kwargs):
        """``torch.tensor(number or nested list, requires_grad=..., dtype=...)``."""
        if len(args) != 1:
            raise SnippetError.at(node, "torch.tensor takes one value: a number or a nested "
                                        "list of numbers")
        unknown = set(kwargs) - {"requires_grad", "dtype"}
        if unknown:
            raise SnippetError.at(node, f"torch.tensor accepts requires_grad= and dtype= here, "
                                        f"not {', '.join(sorted(unknown))}=")
        count = _count_numbers(args[0])
        if count is None:
            raise SnippetError.at(node, "torch.tensor takes a number or a nested list of "
                                        "numbers")
        self.budget.check_shape((count,), node)
        return self.produce(node, lambda: self.library.tensor(args[0], **kwargs))

    def print_(self, node):
        args = [self.evaluate(a) for a in node.args]
        kwargs = {k.arg: self.evaluate(k.value) for k in node.keywords}
        unknown = set(kwargs) - {"sep", "end"}
        if unknown:
            raise SnippetError.at(node, f"print accepts sep= and end= here, not "
                                        f"{', '.join(sorted(unknown))}=")
        for key, value in kwargs.items():
            if value is not None and not isinstance(value, str):
                self.user_error(node, TypeError(f"{key} must be None or a string, not "
                                                f"{_type_name(value)}"))
        sep = kwargs.get("sep") if kwargs.get("sep") is not None else " "
        end = kwargs.get("end") if kwargs.get("end") is not None else "\n"
        text = sep.join(self.guarded(node, lambda: [str(a) for a in args])) + end
        text = _without_addresses(text)
        self.printed_chars += len(text)
        if self.printed_chars > self.limits.print_chars:
            raise LimitError.at(node, f"the snippet printed more than "
                                      f"{self.limits.print_chars:,} characters")
        if self.prints and not self.prints[-1].endswith("\n"):
            self.prints[-1] += text
        else:
            self.prints.append(text)
        return None

    # ------------------------------------------------------------ passes
    def run_pass(self, node, call):
        """One ``backward()`` or ``autograd.grad()`` call: the real call, with the engine run
        one node at a time by the stepper, which records every step."""
        if len(self.passes) >= self.limits.passes:
            raise LimitError.at(node, f"the snippet calls backward more than "
                                      f"{self.limits.passes} times; passes are limited to "
                                      f"{self.limits.passes}")
        with watch_backward(self.mode, _Names(self.labels)) as steppers:
            try:
                value, failure = call(), None
            except (MemoryError, RecursionError):
                raise
            except Exception as error:  # noqa: BLE001 - the snippet's error, as in guarded()
                value, failure = None, error
        in_pass = False
        for stepper in steppers:
            record = {**stepper.to_dict(), "call": _label(self.source, node, 200),
                      "line": node.lineno}
            record.pop("mode", None)
            if record["error"] is not None:
                record["error"] = error_json(stepper.error, node)
                in_pass = in_pass or stepper.error is failure
            self.passes.append(record)
        self.budget.check_nodes(self.nodes_created(), node)
        if failure is not None:
            raise _Raised(failure, node, in_pass=in_pass)
        for t in value if isinstance(value, tuple) else ():
            if isinstance(t, self.Tensor):
                self.budget.add(t.numel(), node)
        return value

    # ------------------------------------------------------------ limits and errors
    def check_elementwise(self, node, *operands, matmul=False):
        shapes = [tuple(t.shape) for t in operands if isinstance(t, self.Tensor)]
        if matmul and len(shapes) == 2:
            self.check_matmul(node, *shapes)
        elif len(shapes) >= 2:
            try:
                shape = np.broadcast_shapes(*shapes)
            except ValueError:
                return  # the op itself raises PyTorch's error
            self.budget.check_shape(shape, node, "the result")

    def check_matmul(self, node, a, b):
        if len(a) == 0 or len(b) == 0:
            return
        left = a if len(a) >= 2 else (1,) + a
        right = b if len(b) >= 2 else b + (1,)
        try:
            batch = np.broadcast_shapes(left[:-2], right[:-2])
        except ValueError:
            return
        shape = tuple(batch) + (left[-2], right[-1])
        self.budget.check_shape(shape, node, "the product")
        self.budget.check_flops(math.prod(shape) * left[-1], node)

    def check_call_size(self, node, name, args, kwargs):
        """Before a call that can make a bigger tensor than its inputs, check the result size.
        Operands passed by keyword count (``torch.add(input=a, other=b)``), and a size given as
        a float or a tensor (``torch.ones(2.5e9)``, ``x.expand(torch.tensor(10**6), -1)``) is
        counted as the whole number it would become, so nothing is allocated before refusal."""
        tensors = [a for a in _flatten([*args, *_keyword_operands(kwargs)])
                   if isinstance(a, self.Tensor)]
        if name in ("ones", "zeros", "randn", "rand", "full"):
            sizes = args[:1] if name == "full" else args
            shape = _size_argument(sizes, kwargs.get("size"), self.Tensor)
            if shape is not None:
                self.budget.check_shape(shape, node)
        elif name in ("arange", "linspace"):
            count = _range_count(name, [_plain_number(a, self.Tensor) for a in args],
                                 {k: _plain_number(v, self.Tensor) for k, v in kwargs.items()})
            if count is not None and count > self.limits.tensor_elements:
                self.budget.check_shape((count,), node)
        elif name in ("matmul", "mm", "mv", "dot") and len(tensors) == 2:
            self.check_matmul(node, tuple(tensors[0].shape), tuple(tensors[1].shape))
        elif name == "linear" and len(tensors) >= 2 and tensors[0].dim() and tensors[1].dim() == 2:
            x, weight = tensors[0].shape, tensors[1].shape
            out = tuple(x[:-1]) + (weight[0],)
            self.budget.check_shape(out, node, "the result")
            self.budget.check_flops(math.prod(out) * x[-1], node)
        elif name == "outer" and len(tensors) == 2:
            self.budget.check_shape((tensors[0].numel(), tensors[1].numel()), node, "the product")
        elif name in ("cat", "stack"):
            self.budget.check_shape((sum(t.numel() for t in tensors),), node)
        elif name in ("expand", "repeat"):
            sizes = _size_argument(args[1:], kwargs.get("size", kwargs.get("repeats")),
                                   self.Tensor, keep=-1 if name == "expand" else None)
            if sizes is not None:
                grow = math.prod(sizes) * (args[0].numel() if name == "repeat" else 1)
                self.budget.check_shape((grow,), node)
        elif len(tensors) >= 2:
            self.check_elementwise(node, *tensors)

    def produce(self, node, compute):
        """Run a tensor op for ``node``; count the elements it made and label its result."""
        value = self.guarded(node, compute)
        for t in (value if isinstance(value, (tuple, list)) else (value,)):
            if isinstance(t, Tensor) and t.is_meta:  # (PyTorch's run refuses it in compare.py)
                self.user_error(node, NotImplementedError(
                    "the lab shows every tensor's values, and a tensor on the meta device has none: "
                    "make it on the CPU"))
            if isinstance(t, self.Tensor):
                self.budget.add(t.numel(), node)
                if id(t) not in self.labels:
                    self.labels[id(t)] = (_label(self.source, node), t)
        return value

    def guarded(self, node, compute):
        """Run ``compute`` (a call the snippet makes); what it raises is the snippet's error,
        as a traceback would show it in Python."""
        try:
            return compute()
        except (MemoryError, RecursionError):
            raise  # limits, reported by run()
        except Exception as error:  # noqa: BLE001 - any error of the call is the snippet's
            raise _Raised(error, node) from None

    def user_error(self, node, error):
        raise _Raised(error, node)

    # ------------------------------------------------------------ the response
    def label_of(self, tensor):
        entry = self.labels.get(id(tensor))
        return entry[0] if entry is not None and entry[1] is tensor else None

    def result(self, raised):
        leaves = []
        for name, t in self.leaves:
            leaves.append({"name": name, "value": tensor_json(t),
                           "grad": tensor_json(t.grad), "node": self.leaf_node_id(name)})
            if self.grads_before is not None:
                leaves[-1]["grad_before"] = tensor_json(self.grads_before.get(name))
        values = [{"name": v["name"], "line": v["line"], "value": tensor_json(v["tensor"]),
                   "grad_fn": None if v["tensor"].grad_fn is None else v["tensor"].grad_fn.name(),
                   "seq": None if v["tensor"].grad_fn is None else _seq(v["tensor"].grad_fn)}
                  for v in self.values]
        error = None
        if raised is not None and not raised.in_pass:
            error = error_json(raised.error, raised.node)
        return {"ok": raised is None, "mode": self.mode, "leaves": leaves, "values": values,
                "passes": self.passes, "prints": self.prints, "error": error,
                "next_sequence_nr": _node.peek_sequence_nr()}

    def leaf_node_id(self, name):
        for p in reversed(self.passes):
            for n in p["graph"]["nodes"] if p.get("graph") else ():
                if n.get("variable") == name:
                    return n["id"]
        return None


def error_json(error, node):
    col = getattr(node, "col_offset", None)
    return {"type": type(error).__name__, "message": _message(error),
            "line": getattr(node, "lineno", None), "col": None if col is None else col + 1}


def _message(error):
    text = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    return _without_addresses(text)


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _without_addresses(text):
    """``<MulBackward0 object at 0x7f...>`` -> ``<MulBackward0 object>``: the server's heap
    addresses are nobody's business (and differ on every run, so they would only confuse)."""
    return _ADDRESS.sub("", text)


# ---------------------------------------------------------------- small helpers

def _seq(fn):
    n = fn._sequence_nr()
    return None if n >= _node.UINT64_MAX else n


def _is_number(value):
    return type(value) in (int, float, bool)


def _is_int(value):
    return type(value) is int


def _type_name(value):
    if isinstance(value, Namespace):
        return "a module"
    if isinstance(value, Node):
        return type(value).__name__
    return type(value).__name__


def _listing(names):
    return ", ".join(sorted(names))


def _namespace_help(namespace):
    return f"Allowed: {', '.join(f'{namespace.path}.{n}' for n in sorted(namespace.functions))}"


def _label(source, node, width=40):
    """The source text of ``node`` on one line (``w * x + b``), cut to ``width``."""
    text = " ".join(source.segment(node).split())
    return text if len(text) <= width else text[:width - 3] + "..."


class Source(str):
    """The snippet's text, with the source segment of a node in O(its length)
    (``ast.get_source_segment`` splits the whole text on every call)."""

    def segment(self, node):
        if not hasattr(self, "_lines"):
            self._lines = [line.encode() for line in self.splitlines(keepends=True)]
        first, last = node.lineno - 1, node.end_lineno - 1
        if first == last:
            chunk = self._lines[first][node.col_offset:node.end_col_offset]
        else:
            chunk = b"".join([self._lines[first][node.col_offset:], *self._lines[first + 1:last],
                              self._lines[last][:node.end_col_offset]])
        return chunk.decode("utf-8", errors="replace")  # col offsets count UTF-8 bytes


class _Names:
    """The stepper's ``names`` (it reads ``.items()``: ``(tensor, name)`` pairs): variables by
    name, other results by their expression (``w * x + b``). Read when each pass starts."""

    def __init__(self, labels):
        self.labels = labels

    def items(self):
        return [(tensor, name) for name, tensor in self.labels.values()]


def _flatten(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _flatten(v)
        else:
            yield v


def _count_numbers(data):
    """Numbers in a nested list (None if anything else is inside), iteratively."""
    count = 0
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif _is_number(item):
            count += 1
        else:
            return None
    return count


# operands a call may take by keyword, in the order they would be given by position
_OPERAND_KEYWORDS = ("input", "self", "other", "mat2", "vec", "vec2", "tensor", "weight",
                     "bias", "target", "min", "max", "exponent", "tensors")


def _keyword_operands(kwargs):
    named = [kwargs[k] for k in _OPERAND_KEYWORDS if k in kwargs]
    return named + [v for k, v in kwargs.items() if k not in _OPERAND_KEYWORDS]


def _plain_number(value, tensor_type):
    """A one-element tensor's number (what an op would read from it), else ``value``."""
    if isinstance(value, tensor_type) and value.numel() == 1:
        return value.item()
    return value


def _size_argument(args, size, tensor_type, keep=None):
    """The shape in ``ones(2, 3)``, ``ones((2, 3))``, ``ones(size=[2, 3])``, ``ones(2.5e9)`` or
    ``ones(torch.tensor([2, 3]))``, as the whole numbers an op could make of it (floats
    truncated, tensors read, signs dropped); None when something in it is not a number (the
    op then raises its own error without allocating). ``keep``: the size that means "as it
    is" (``expand(-1, 4)``), counted as 1."""
    values = [size] if size is not None else list(args)
    sizes = []
    while values:
        value = values.pop(0)
        if isinstance(value, (list, tuple)):
            values[:0] = list(value)
        elif isinstance(value, tensor_type):
            if value.numel() > 64:  # no shape has that many dimensions: the op refuses it
                return None
            values[:0] = list(np.ravel(value.detach().numpy() if hasattr(value, "detach")
                                       else value))
        elif _is_number(value) or isinstance(value, (np.integer, np.floating, np.bool_)):
            number = float(value)
            if not math.isfinite(number):
                return None  # the op raises (no array has an infinite size)
            sizes.append(1 if number == keep else int(abs(number)))
        else:
            return None
    return tuple(sizes) if sizes else None


def _range_count(name, args, kwargs):
    numbers = [a for a in args if _is_number(a)]
    if name == "linspace":
        steps = kwargs.get("steps", args[2] if len(args) > 2 else None)
        return steps if _is_int(steps) else None
    if len(numbers) != len(args) or not 1 <= len(numbers) <= 3:
        return None
    start, end, step = (0, numbers[0], 1) if len(numbers) == 1 else (
        numbers[0], numbers[1], numbers[2] if len(numbers) > 2 else 1)
    step = kwargs.get("step", step)
    if not _is_number(step) or step == 0:
        return None
    span = (end - start) / step
    if not math.isfinite(span):
        return 2**63
    return max(0, math.ceil(span))
