"""``gradwalk dot SCRIPT.py``: the Graphviz DOT source of every backward graph a script builds.

    gradwalk dot neuron.py | dot -Tsvg > neuron.svg
    gradwalk dot neuron.py --show-saved --render neuron.svg   # one file per pass: neuron.svg, neuron-2.svg

The script runs with ``import torch`` served by gradwalk; at each ``backward()`` /
``autograd.grad()`` call the graph is drawn by ``gradwalk.viz.make_dot`` with the leaves named
after the script's variables.
"""
import argparse
import os
import sys

from ..viz import make_dot
from .cli import pass_title, run_on_gradwalk


def render(dot, path):
    fmt = os.path.splitext(path)[1].lstrip(".") or "svg"
    if not hasattr(dot, "pipe") or type(dot).__name__ == "DotGraph":
        raise RuntimeError("rendering needs the graphviz Python package: pip install graphviz")
    with open(path, "wb") as f:
        f.write(dot.pipe(format=fmt))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="gradwalk dot",
                                     description="Print the DOT source of a script's backward graphs.")
    parser.add_argument("script")
    parser.add_argument("--show-saved", action="store_true", help="draw the saved tensors too")
    parser.add_argument("--render", metavar="FILE.svg",
                        help="also render each graph with Graphviz (svg, png, pdf by extension)")
    args = parser.parse_args(argv)
    if not os.path.exists(args.script):
        print(f"gradwalk dot: no such file: {args.script}", file=sys.stderr)
        return 2
    dots = []

    def draw(s):  # before the pass runs, while the saved tensors are still there
        params = {name: fn.variable for fn, name in s.leaf_names.items()}
        for out in s.outputs:
            entry = s.forward.get(out.grad_fn)
            if entry is not None and entry[1] is out:
                params[entry[0]] = out
        dots.append(make_dot(s.outputs, params=params, show_saved=args.show_saved))

    passes, error = run_on_gradwalk(args.script, stdout=sys.stderr, before_run=draw)
    for number, (s, dot) in enumerate(zip(passes, dots), 1):
        print(f"// {pass_title(number, s)}")
        print(dot.source)
        if args.render:
            stem, ext = os.path.splitext(args.render)
            path = args.render if number == 1 else f"{stem}-{number}{ext}"
            render(dot, path)
            print(f"// rendered to {path}", file=sys.stderr)
    if not passes:
        print("// no backward() or autograd.grad() call ran", file=sys.stderr)
    return 1 if error is not None else 0
