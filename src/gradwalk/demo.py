"""``gradwalk demo``: the seeds' neuron, with the order in which the engine runs its nodes."""
import argparse


def run_neuron():
    import gradwalk as torch

    w = torch.tensor(0.5, requires_grad=True)
    x = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(-0.3, requires_grad=True)
    y = torch.tanh(w * x + b)
    names = {id(w): "w", id(x): "x", id(b): "b"}
    rows = []
    seen, stack = set(), [y.grad_fn]
    while stack:  # a pre-hook on every node records the engine's order
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        node.register_prehook(lambda grads, node=node: rows.append((node, grads[0])))
        stack.extend(fn for fn, _ in node.next_functions)
    y.backward()
    return rows, names, (w, x, b, y)


def main(argv=None):
    argparse.ArgumentParser(prog="gradwalk demo", description=__doc__).parse_args(argv)
    rows, names, (w, x, b, y) = run_neuron()
    print("y = tanh(w*x + b) with w=0.5, x=2.0, b=-0.3")
    print(f"y = {y}\n")
    table = []
    for i, (node, grad) in enumerate(rows, 1):
        label = node.name()
        if hasattr(node, "variable"):
            label += f" ({names[id(node.variable)]})"
        table.append((str(i), label, str(node._sequence_nr()), f"{grad.item():.6f}"))
    # columns as wide as their widest cell, so no row runs past its column
    heading = ("step", "node", "seq", "grad received")
    widths = [max(len(row[c]) for row in [heading, *table]) for c in range(4)]
    for row in [heading, *table]:
        print(f"{row[0]:>{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:>{widths[2]}}  "
              f"{row[3]:>{widths[3]}}".rstrip())
    print(f"\nw.grad = {w.grad.item():.8f}   x.grad = {x.grad.item():.8f}   b.grad = {b.grad.item():.8f}")
