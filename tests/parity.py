"""Shared helpers for tests that run the same code under gradwalk and under real PyTorch.

Import them with ``from parity import run_both, assert_same, ...`` (``tests/conftest.py`` re-exports
them too, but a second ``conftest.py`` elsewhere under ``tests/`` can shadow that module name).

    gw, pt = run_both('''
        x = torch.tensor([1., 2.], requires_grad=True)
        y = (x * 3).sum()
        y.backward()
    ''')
    assert_same(gw["x"].grad, pt["x"].grad)

``run_both`` executes a snippet twice, once with ``torch`` (and ``F``) bound to gradwalk and once
to PyTorch, and returns both namespaces. The other helpers read the graph the way a user would,
through PyTorch's public API (``grad_fn``, ``next_functions``, ``register_prehook``), so they work
on either library's tensors.

Real torch is imported unconditionally: the parity tests must fail, not skip, without it.
"""
import contextlib
import io
import textwrap
import types

import numpy as np
import torch  # real PyTorch: a hard dependency of the test suite

import gradwalk


def gradwalk_functional():
    """``gradwalk.nn.functional`` when it exists, else the same functions from the core ops."""
    try:
        from gradwalk.nn import functional

        return functional
    except ImportError:
        from gradwalk.ops import activation

        names = {n: getattr(activation, n) for n in dir(activation) if not n.startswith("_")}
        names.update(relu=gradwalk.relu, sigmoid=gradwalk.sigmoid, tanh=gradwalk.tanh)
        return types.SimpleNamespace(**names)


LIBRARIES = {
    "gradwalk": (gradwalk, gradwalk_functional()),
    "torch": (torch, torch.nn.functional),
}


def run_in(library, snippet, **env):
    """Run ``snippet`` with ``torch``/``F`` bound to ``library`` ("gradwalk" or "torch")."""
    module, functional = LIBRARIES[library]
    namespace = {"torch": module, "F": functional, "np": np, **env}
    exec(compile(textwrap.dedent(snippet), f"<{library} snippet>", "exec"), namespace)
    return namespace


def run_both(snippet, **env):
    """Run ``snippet`` under gradwalk and under PyTorch; return ``(gradwalk_ns, torch_ns)``."""
    return run_in("gradwalk", snippet, **env), run_in("torch", snippet, **env)


def printed(library, snippet):
    """What ``snippet`` prints when run under ``library``."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        run_in(library, snippet)
    return out.getvalue()


def assert_same_output(snippet):
    """``snippet`` prints the same text under gradwalk as under PyTorch."""
    assert printed("gradwalk", snippet) == printed("torch", snippet)


def raised_by(library, snippet, **env):
    """The exception ``snippet`` raises under ``library`` (fails the test if none is raised)."""
    try:
        run_in(library, snippet, **env)
    except Exception as error:  # noqa: BLE001 - we compare whatever was raised
        return error
    raise AssertionError(f"{library} raised nothing for:\n{textwrap.dedent(snippet)}")


def message(error):
    """An exception's text without PyTorch's C++ location suffix."""
    text = str(error)
    cut = text.find(" (Triggered internally at")
    return text if cut < 0 else text[:cut]


def assert_same_error(snippet, **env):
    """Both libraries raise the same exception type with the same message."""
    ours, theirs = raised_by("gradwalk", snippet, **env), raised_by("torch", snippet, **env)
    assert message(ours) == message(theirs)
    assert _error_kind(ours) == _error_kind(theirs), (type(ours), type(theirs))


def _error_kind(error):
    # torch raises its own subclasses (torch.AcceleratorError, ...); compare the builtin base
    for kind in (IndexError, TypeError, ValueError, RuntimeError):
        if isinstance(error, kind):
            return kind
    return type(error)


# ---------------------------------------------------------------- comparing tensors

def to_numpy(t):
    if t is None:
        return None
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t.detach()._data)


def dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def assert_same(ours, theirs, rtol=1e-6, atol=1e-7):
    """Same shape, dtype and values (nan where PyTorch has nan, inf where it has inf)."""
    if theirs is None:
        assert ours is None, f"expected None, got {ours!r}"
        return
    assert ours is not None, f"expected {theirs!r}, got None"
    assert tuple(ours.shape) == tuple(theirs.shape), (tuple(ours.shape), tuple(theirs.shape))
    assert dtype_name(ours) == dtype_name(theirs), (ours.dtype, theirs.dtype)
    np.testing.assert_allclose(to_numpy(ours), to_numpy(theirs), rtol=rtol, atol=atol,
                               equal_nan=True)


# ---------------------------------------------------------------- reading graphs

def node_label(node, names=None):
    """A node's name; AccumulateGrad nodes get the variable's name from ``names`` if given."""
    if node is None:
        return None
    if names is not None and hasattr(node, "variable"):
        for name, value in names.items():
            if value is node.variable:
                return f"AccumulateGrad({name})"
    return type(node).__name__ if type(node).__name__ != "AccumulateGrad" else "AccumulateGrad"


def all_nodes(root):
    """Every node reachable from ``root`` (a node), in a fixed depth-first order, iteratively."""
    seen, order, stack = set(), [], [root]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        order.append(node)
        stack.extend(fn for fn, _ in reversed(node.next_functions))
    return order


def graph_structure(tensor, names=None):
    """The graph under ``tensor`` as nested tuples of ``(name, ((child, input_nr), ...))``, in
    ``next_functions`` order: equal for two libraries iff they built the same graph."""
    root = tensor.grad_fn
    if root is None:
        return None
    structure = {}
    stack = [root]
    while stack:  # iterative post-order: a node is described once all its children are
        node = stack[-1]
        pending = [fn for fn, _ in node.next_functions if fn is not None and fn not in structure]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        structure[node] = (node_label(node, names), tuple(
            (structure[fn] if fn is not None else None, nr) for fn, nr in node.next_functions))
    return structure[root]


def record_order(roots, names=None):
    """Put a prehook on every node under ``roots`` (tensors); the returned list fills with
    ``(label, grad values)`` in the order the engine runs the nodes."""
    order = []
    seen = set()
    for root in roots:
        if root.grad_fn is None:
            continue
        for node in all_nodes(root.grad_fn):
            if node in seen:
                continue
            seen.add(node)
            label = node_label(node, names)
            node.register_prehook(
                lambda grads, label=label: order.append(
                    (label, tuple(None if g is None else to_numpy(g).tolist() for g in grads))))
    return order


def assert_same_order(ours, theirs):
    """Same node sequence and the same gradient arriving at each node."""
    assert [label for label, _ in ours] == [label for label, _ in theirs]
    for (label, grads), (_, expected) in zip(ours, theirs):
        for g, e in zip(grads, expected):
            if e is None:
                assert g is None, label
            else:
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-7, equal_nan=True,
                                           err_msg=label)


# ---------------------------------------------------------------- numerical gradients

def central_difference(f, inputs, eps=1e-6):
    """d sum(f(*inputs)) / d input, per element, by central differences (float64 arrays in)."""
    grads = []
    arrays = [np.array(a, dtype=np.float64) for a in inputs]
    for k, a in enumerate(arrays):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            old = a[idx]
            a[idx] = old + eps
            hi = float(np.sum(f(*arrays)))
            a[idx] = old - eps
            lo = float(np.sum(f(*arrays)))
            a[idx] = old
            g[idx] = (hi - lo) / (2 * eps)
        grads.append(g)
    return grads


# ---------------------------------------------------------------- tables of op cases

def seed_gradient(out):
    """A fixed, non-uniform gradient of ``out``'s shape, float64 (both libraries cast it): a
    transposed or mis-broadcast gradient can't hide behind a plain sum."""
    n = int(np.prod(out.shape))
    return np.linspace(0.5, 1.5, n).reshape(tuple(out.shape)) if n else np.zeros(tuple(out.shape))


class OpTable:
    """Op cases ``(name, expression, grad_leaves)`` over named leaves (``LEAVES``: name -> values),
    checked the same way by every op test file: beside PyTorch, and against central differences."""

    def __init__(self, leaves):
        self.leaves = leaves

    def build(self, library, dtype_name, expression, grad_leaves, overrides=None):
        """Create the leaves in ``library`` and evaluate ``expression``; returns the namespace."""
        env = {name: np.array(value, dtype=np.float64) for name, value in self.leaves.items()}
        env.update(overrides or {})
        return run_in(library, self.setup(dtype_name, grad_leaves) + f"out = {expression}\n",
                      **{f"_{name}": value for name, value in env.items()})

    def setup(self, dtype_name, grad_leaves):
        """Snippet lines creating each leaf from ``_<name>`` (requires grad if in grad_leaves)."""
        return "".join(
            f"{name} = torch.tensor(_{name}, dtype=torch.{dtype_name}, requires_grad={name in grad_leaves})\n"
            for name in self.leaves)

    def check_against_torch(self, expression, grad_leaves, dtype):
        """Value, node name, the whole next_functions graph and every leaf's gradient vs PyTorch."""
        ours = self.build("gradwalk", dtype, expression, grad_leaves)
        theirs = self.build("torch", dtype, expression, grad_leaves)
        tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)

        assert_same(ours["out"], theirs["out"], **tol)
        assert type(ours["out"].grad_fn).__name__ == type(theirs["out"].grad_fn).__name__
        names = {n: ours[n] for n in self.leaves}, {n: theirs[n] for n in self.leaves}
        assert graph_structure(ours["out"], names[0]) == graph_structure(theirs["out"], names[1])

        ours["out"].backward(gradwalk.tensor(seed_gradient(ours["out"])))
        theirs["out"].backward(torch.tensor(seed_gradient(theirs["out"])))
        for leaf in self.leaves:
            assert_same(ours[leaf].grad, theirs[leaf].grad, **tol)

    def check_central_differences(self, expression, grad_leaves, allow_unused=False):
        """Analytical float64 gradients against (f(x+eps) - f(x-eps)) / 2eps, computed with
        gradwalk's own forward (no PyTorch involved). ``allow_unused``: a leaf the output does
        not depend on may keep ``.grad = None`` (its numerical gradient must then be zero)."""
        ns = self.build("gradwalk", "float64", expression, grad_leaves)
        seed = seed_gradient(ns["out"])
        ns["out"].backward(gradwalk.tensor(seed))
        leaves = [name for name in self.leaves if name in grad_leaves]

        def f(*arrays):
            with gradwalk.no_grad():
                out = self.build("gradwalk", "float64", expression, "", dict(zip(leaves, arrays)))["out"]
            return out.numpy() * seed

        numeric = central_difference(f, [self.leaves[name] for name in leaves])
        for name, expected in zip(leaves, numeric):
            grad = ns[name].grad
            if grad is None and allow_unused:
                assert not expected.any(), name
                continue
            np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-5, atol=1e-6, err_msg=name)
