"""Graphviz pictures of the backward graph, torchviz-style.

    >>> import gradwalk as torch
    >>> from gradwalk.viz import make_dot
    >>> w = torch.tensor([0.5, 1.0], requires_grad=True)
    >>> y = (w * 2).sum()
    >>> dot = make_dot(y, params={"w": w})
    >>> 'label="w' in dot.source and 'fillcolor=lightblue' in dot.source
    True

Boxes: the output (green), each backward node with its sequence number (grey), each leaf with its
parameter name and shape (blue), and with ``show_saved=True`` the tensors each node saved for
backward (orange). Arrows point the way the forward pass went, from inputs to the op that used
them, as torchviz draws them. ``dot.source`` is always there; ``dot.render("graph", format="svg")``
and ``dot.pipe(format="png")`` need the Graphviz ``dot`` program (``apt-get install graphviz``).
"""
from .autograd.node import UINT64_MAX, AccumulateGrad

NODE_ATTR = dict(style="filled", shape="box", align="left", fontsize="10", ranksep="0.1",
                 height="0.2", fontname="monospace")


def _shape(shape):
    return "(" + ", ".join(str(s) for s in shape) + ")"


def _quote(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


class DotGraph:
    """The part of ``graphviz.Digraph`` that make_dot uses, for when the package isn't installed."""

    def __init__(self, node_attr=None, graph_attr=None):
        self.body = []
        self.node_attr = dict(node_attr or {})
        self.graph_attr = dict(graph_attr or {})

    @staticmethod
    def _attrs(attrs):
        return " ".join(f"{key}={_quote(value) if not value.isidentifier() else value}"
                        for key, value in attrs.items())

    def node(self, name, label=None, **attrs):
        if label is not None:
            attrs = {"label": label, **attrs}
        self.body.append(f"\t{name} [{self._attrs(attrs)}]\n")

    def edge(self, tail, head, **attrs):
        extra = f" [{self._attrs(attrs)}]" if attrs else ""
        self.body.append(f"\t{tail} -> {head}{extra}\n")

    @property
    def source(self):
        head = ["digraph {\n"]
        if self.graph_attr:
            head.append(f"\tgraph [{self._attrs(self.graph_attr)}]\n")
        if self.node_attr:
            head.append(f"\tnode [{self._attrs(self.node_attr)}]\n")
        return "".join(head + self.body) + "}\n"

    def render(self, *args, **kwargs):
        raise RuntimeError("rendering needs the graphviz Python package: pip install graphviz")

    pipe = render


def _new_graph():
    try:
        from graphviz import Digraph
    except ImportError:
        return DotGraph(node_attr=NODE_ATTR, graph_attr=dict(size="12,12"))
    return Digraph(node_attr=NODE_ATTR, graph_attr=dict(size="12,12"))


def make_dot(var, params=None, show_saved=False):
    """The backward graph of ``var`` (a tensor or a sequence of tensors) as a Digraph.

    ``params``: ``{name: tensor}`` (e.g. ``dict(model.named_parameters())``) to label leaves.
    ``show_saved``: also draw the tensors each node saved for backward.
    """
    from .tensor import Tensor

    outputs = [var] if isinstance(var, Tensor) else list(var)
    param_names = {id(t): name for name, t in (params or {}).items()}
    dot = _new_graph()
    ids = {}

    def node_id(obj):
        if id(obj) not in ids:
            ids[id(obj)] = f"n{len(ids)}"
        return ids[id(obj)]

    roots = []
    for k, out in enumerate(outputs):
        label = param_names.get(id(out), "output" if len(outputs) == 1 else f"output{k}")
        dot.node(node_id(out), f"{label}\n {_shape(out.shape)}", fillcolor="darkolivegreen1")
        if out.grad_fn is not None:
            roots.append(out.grad_fn)
            dot.edge(node_id(out.grad_fn), node_id(out))
    seen = set()
    stack = list(reversed(roots))
    while stack:  # iterative: a 100,000-node chain is fine
        fn = stack.pop()
        if fn in seen:
            continue
        seen.add(fn)
        if isinstance(fn, AccumulateGrad):
            leaf = fn.variable
            name = param_names.get(id(leaf), "")
            dot.node(node_id(fn), f"{name}\n {_shape(leaf.shape)}", fillcolor="lightblue")
        else:
            seq = fn._sequence_nr_value
            label = fn.name() if seq == UINT64_MAX else f"{fn.name()}\nseq {seq}"
            dot.node(node_id(fn), label, fillcolor="lightgrey")
            if show_saved:
                _draw_saved(dot, fn, node_id)
        for next_fn, _ in fn.next_functions:
            if next_fn is not None:
                dot.edge(node_id(next_fn), node_id(fn))
                if next_fn not in seen:
                    stack.append(next_fn)
    return dot


def _draw_saved(dot, fn, node_id):
    saved_items = getattr(fn, "saved_items", None)  # op nodes keep saved values by name
    for name, value in saved_items() if saved_items is not None else ():
        if value._freed:
            label = f"{name}\n (freed)"
        else:
            tensor = getattr(value, "_tensor", None)
            data = tensor._data if tensor is not None else getattr(value, "_data", None)
            label = f"{name}\n {_shape(data.shape)}" if data is not None else name
        dot.node(node_id(value), label, fillcolor="orange")
        dot.edge(node_id(value), node_id(fn), dir="none")
