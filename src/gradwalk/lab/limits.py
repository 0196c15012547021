"""What one request to the lab may use, and the checks that enforce it.

Every limit fails with a ``LimitError`` that says which limit and what the snippet asked for;
the server turns it into a 4xx answer and keeps serving. Checks run *before* the work they
guard (a shape is checked before the array is allocated, ``2**10**10`` before it is computed),
so a hostile snippet costs little. Two limits cannot be checked ahead: wall time and memory.
Those are enforced from outside, by running each snippet in a worker process that is killed
when it runs too long (``workers.py``) and that has an address-space limit.
"""
import math
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Limits:
    body_bytes: int = 64 * 1024  # request body (413 above this)
    source_chars: int = 20_000  # snippet text
    statements: int = 200  # in the text, the statements inside blocks included
    loop_iterations: int = 1_000  # rounds of one `for _ in range(k):`
    executed_statements: int = 5_000  # statements run in all, each round of a loop counted
    nesting: int = 64  # brackets in the text and depth of the syntax tree
    tensor_elements: int = 10_000  # one tensor
    total_elements: int = 200_000  # all tensors a snippet makes, intermediates included
    graph_nodes: int = 500  # backward nodes a snippet may create
    passes: int = 200  # backward() / autograd.grad() calls (a loop's rounds count)
    matmul_flops: int = 10_000_000
    int_bits: int = 64  # Python integers in the snippet
    print_chars: int = 20_000
    response_bytes: int = 8 * 1024 * 1024
    seconds: float = 5.0  # wall time per request; the worker is killed after this
    memory_bytes: int = 1024 * 1024 * 1024  # address space added on top of a fresh worker's
    concurrent: int = 16  # requests running or waiting for a worker; more get 503 (docs/lab-api.md)
    recycle_bytes: int = 256 * 1024 * 1024  # a worker holding more than this is replaced
    recycle_requests: int = 1_000  # a worker is replaced after serving this many requests
    body_seconds: float = 10.0  # to send a request's headers and body (408 after this)
    sequence_start: int = 1_000_000_000  # the largest "sequence_start" a request may ask for

    def but(self, **changes):
        """A copy with some limits changed: ``DEFAULT_LIMITS.but(seconds=0.5)``."""
        return replace(self, **changes)


DEFAULT_LIMITS = Limits()


class SnippetError(Exception):
    """A snippet the lab will not run: a syntax error, a construct outside the whitelist, or a
    limit. ``line`` and ``col`` are 1-based (None when the error is about the whole request)."""

    kind = "SnippetError"

    def __init__(self, message, line=None, col=None):
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col

    @classmethod
    def at(cls, node, message):
        """The error at an ``ast`` node's position."""
        line = getattr(node, "lineno", None)
        col = getattr(node, "col_offset", None)
        return cls(message, line, None if col is None else col + 1)

    def to_dict(self):
        return {"type": self.kind, "message": self.message, "line": self.line, "col": self.col}


class SnippetSyntaxError(SnippetError):
    kind = "SyntaxError"


class LimitError(SnippetError):
    kind = "LimitError"


def check_source_text(source, limits):
    """Size and bracket nesting of the raw text, before Python's parser sees it (the parser
    recurses on nesting and can run out of stack or memory on 10,000 parentheses)."""
    if len(source) > limits.source_chars:
        raise LimitError(f"the snippet has {len(source):,} characters; the limit is "
                         f"{limits.source_chars:,}")
    too_deep = _too_deep_bracket(source, limits.nesting)
    if too_deep is not None:
        raise LimitError(f"brackets are nested more than {limits.nesting} deep here",
                         *too_deep)


def _too_deep_bracket(source, limit):
    """(line, col) of the first ( [ { nested deeper than ``limit``, outside strings and
    comments; None if there is none. A plain scan, not tokenize, so that it also works on text
    that does not parse."""
    depth = 0
    line, col = 1, 0
    quote = None
    i, n = 0, len(source)
    while i < n:
        ch = source[i]
        col += 1
        if ch == "\n":
            line, col = line + 1, 0
        if quote:
            if ch == "\\":
                i += 2
                col += 1
                continue
            if source.startswith(quote, i):
                i += len(quote)
                col += len(quote) - 1
                quote = None
                continue
        elif ch == "#":
            end = source.find("\n", i)
            i = n if end < 0 else end
            col -= 1
            continue
        elif ch in "'\"":
            quote = source[i:i + 3] if source[i:i + 3] in ("'''", '"""') else ch
            i += len(quote)
            col += len(quote) - 1
            continue
        elif ch in "([{":
            depth += 1
            if depth > limit:
                return line, col
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        i += 1
    return None


def check_sequence_start(value, limits):
    """A request's ``sequence_start`` (where the sequence counter starts): a non-negative int
    up to the limit. A wrong type is a ``SnippetError`` (400), too large a ``LimitError`` (422)."""
    if type(value) is not int or value < 0:
        raise SnippetError(f'"sequence_start" must be a non-negative integer, not {value!r}')
    if value > limits.sequence_start:
        raise LimitError(f'"sequence_start" is {value:,}; the limit is {limits.sequence_start:,} '
                         f'(send 0 to start the sequence numbers again)')


def check_int(value, limits, node):
    """Python integers stay machine-sized, so ``10**18 * 10**18 * ...`` cannot grow forever."""
    if isinstance(value, int) and value.bit_length() > limits.int_bits:
        raise LimitError.at(node, f"this integer needs {value.bit_length()} bits; integers are "
                                  f"limited to {limits.int_bits} bits")


def check_int_power(base, exponent, limits, node):
    """``base ** exponent`` on Python ints, checked before it is computed (``2**10**10``)."""
    if not isinstance(base, int) or not isinstance(exponent, int) or exponent <= 0:
        return
    if abs(base) <= 1:
        return
    bits = (abs(base).bit_length() - 1) * exponent
    if bits > limits.int_bits:
        raise LimitError.at(node, f"{base} ** {exponent} would need about {bits:,} bits; "
                                  f"integers are limited to {limits.int_bits} bits")


class Budget:
    """What one snippet has used so far: elements made and backward nodes created."""

    def __init__(self, limits):
        self.limits = limits
        self.elements = 0

    def check_shape(self, shape, node, what="this tensor"):
        """Before allocating: one tensor of ``shape`` fits the per-tensor and total limits."""
        count = math.prod(int(d) for d in shape)
        if count > self.limits.tensor_elements:
            raise LimitError.at(node, f"{what} would have {count:,} elements "
                                      f"(shape {list(shape)}); one tensor may have at most "
                                      f"{self.limits.tensor_elements:,}")
        if self.elements + count > self.limits.total_elements:
            raise LimitError.at(node, f"the snippet would make {self.elements + count:,} tensor "
                                      f"elements in all; the limit is "
                                      f"{self.limits.total_elements:,}")

    def add(self, count, node):
        """After making a tensor of ``count`` elements."""
        self.elements += count
        if count > self.limits.tensor_elements or self.elements > self.limits.total_elements:
            self.elements -= count
            self.check_shape((count,), node)

    def check_nodes(self, created, node):
        if created > self.limits.graph_nodes:
            raise LimitError.at(node, f"the snippet has created {created:,} backward nodes; the "
                                      f"graph is limited to {self.limits.graph_nodes:,}")

    def check_flops(self, flops, node):
        if flops > self.limits.matmul_flops:
            raise LimitError.at(node, f"this product needs {flops:,} multiply-adds; the limit is "
                                      f"{self.limits.matmul_flops:,}")
