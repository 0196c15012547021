"""The ``gradwalk`` command: ``gradwalk lab``, ``gradwalk trace``, ``gradwalk dot``, ``gradwalk train``,
``gradwalk demo``. Each subcommand lives in its own module and is imported only when used."""
import importlib
import sys

COMMANDS = {
    "lab": ("gradwalk.lab.cli", "Start the lab: a local web page to step through backward()"),
    "trace": ("gradwalk.tracing.cli", "Run a PyTorch script on gradwalk and print every backward step"),
    "dot": ("gradwalk.tracing.dot_cli", "Print the Graphviz DOT of a script's backward graphs"),
    "train": ("gradwalk.train.cli", "Train xor | moons | digits | digits-cnn"),
    "demo": ("gradwalk.demo", "Print the engine's steps for the neuron y = tanh(w*x + b)"),
}


def usage():
    lines = ["usage: gradwalk <command> [options]", "", "commands:"]
    lines += [f"  {name:<8} {help_}" for name, (_, help_) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"gradwalk: unknown command '{name}'\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    return module.main(rest) or 0


if __name__ == "__main__":
    sys.exit(main())
