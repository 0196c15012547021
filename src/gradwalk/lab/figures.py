"""The numbers behind the lab's figures, each computed with gradwalk (never in the browser).

One function per figure; each takes plain Python numbers and returns a JSON-ready dict.
Every derivative here comes from gradwalk's engine (``backward`` / ``autograd.grad``) in
float64; finite differences are computed from gradwalk's forward values.

    >>> round(forward_mode(0.5)["tangent"], 5)
    0.15252
    >>> paths_sum(2.0, 3.0, 4.0, bug=True)["x_grad"]   # only the last path's y survives `=`
    3.0
"""
import math

import numpy as np

import gradwalk as torch
import gradwalk.nn.functional as F
from gradwalk.autograd import run_backward

F64 = torch.float64


class FigureError(ValueError):
    """A request the figure cannot answer (unknown choice, value out of range): HTTP 400."""


# ---- small helpers --------------------------------------------------------------------------

def number(v):
    """A float for JSON; non-finite values as the strings "inf", "-inf", "nan" (docs/lab-api.md)."""
    v = float(v)
    if math.isfinite(v):
        return v
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def numbers(values):
    return [number(v) for v in np.asarray(values, dtype=np.float64).ravel()]


def leaf(value):
    return torch.tensor(value, dtype=F64, requires_grad=True)


def const(value):
    return torch.tensor(value, dtype=F64)


def derivative(fn, x):
    """d fn / dx at x (scalar), by gradwalk's backward pass."""
    xt = leaf(x)
    y = fn(xt)
    y.backward()
    return y.item(), xt.grad.item()


def elementwise_derivative(fn, xs):
    """fn and its derivative at every point of xs, in one backward pass (fn is elementwise)."""
    xt = leaf(xs)
    y = fn(xt)
    y.sum().backward()
    return y.detach().numpy(), xt.grad.numpy()


def value_of(fn, x):
    with torch.no_grad():
        return fn(const(x)).item()


def check_range(name, value, low, high):
    if not (low <= value <= high):
        raise FigureError(f"{name} must lie in [{low}, {high}], got {value}")
    return value


def choose(kind, table, key):
    if key not in table:
        raise FigureError(f"unknown {kind} {key!r}; choose one of {', '.join(table)}")
    return table[key]


# ---- 1. chain rule ----------------------------------------------------------------------------

INNER = {  # u = g(x)
    "x**2": lambda x: x ** 2,
    "sin(x)": lambda x: torch.sin(x),
    "3*x + 1": lambda x: 3 * x + 1,
    "exp(x)": lambda x: torch.exp(x),
}
OUTER = {  # y = f(u)
    "sin(u)": lambda u: torch.sin(u),
    "u**3": lambda u: u ** 3,
    "tanh(u)": lambda u: torch.tanh(u),
    "exp(-u)": lambda u: torch.exp(-u),
}
CHAIN_RANGE = (-2.0, 2.0)
FD_STEP = 1e-5


def chain_rule(inner="x**2", outer="sin(u)", x=0.8):
    """The inner slope g'(x), the outer slope f'(u) at u = g(x), their product, the composite
    slope from one backward pass through f(g(x)), and a central-difference estimate."""
    g, f = choose("inner function", INNER, inner), choose("outer function", OUTER, outer)
    check_range("x", x, *CHAIN_RANGE)
    u, inner_slope = derivative(g, x)
    y, outer_slope = derivative(f, u)            # f' evaluated at u = g(x), not at x
    _, composite = derivative(lambda t: f(g(t)), x)
    composite_fn = lambda t: f(g(t))  # noqa: E731
    estimate = (value_of(composite_fn, x + FD_STEP) - value_of(composite_fn, x - FD_STEP)) / (2 * FD_STEP)
    xs = np.linspace(*CHAIN_RANGE, 161)
    ys, slopes = elementwise_derivative(composite_fn, xs)
    with torch.no_grad():
        us = g(const(xs)).numpy()
    # the tangent line y + composite·(t − x), drawn only near x
    tangent = np.where(np.abs(xs - x) <= 0.6, y + composite * (xs - x), np.nan)
    return {
        "inner": inner, "outer": outer, "inner_choices": list(INNER), "outer_choices": list(OUTER),
        "x": x, "u": number(u), "y": number(y),
        "inner_slope": number(inner_slope), "outer_slope": number(outer_slope),
        "product": number(inner_slope * outer_slope), "composite": number(composite),
        "finite_difference": number(estimate), "h": FD_STEP,
        "curve": {"x": numbers(xs), "u": numbers(us), "y": numbers(ys), "slope": numbers(slopes),
                  "tangent": numbers(tangent)},
    }


# ---- 2. activation slopes ---------------------------------------------------------------------

ACTIVATIONS = {
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "relu": torch.relu,
    "gelu": F.gelu,              # the exact form, x·Φ(x)
    "leaky_relu": F.leaky_relu,  # negative slope 0.01
}
ACTIVATION_RANGE = (-6.0, 6.0)
MAX_DEPTH = 30


def activation(name="sigmoid", x=1.0, depth=10):
    """The curve and its local derivative; at x, the value backward multiplies by; and the
    gradient d a_n / d x through n stacked layers a_n = act(a_(n-1)), a_0 = x, for n ≤ depth."""
    act = choose("activation", ACTIVATIONS, name)
    check_range("x", x, *ACTIVATION_RANGE)
    depth = int(check_range("depth", depth, 1, MAX_DEPTH))
    xs = np.linspace(*ACTIVATION_RANGE, 241)
    ys, slopes = elementwise_derivative(act, xs)
    value, slope = derivative(act, x)

    xt = leaf(x)
    layers = [xt]
    for _ in range(depth):
        layers.append(act(layers[-1]))
    stacked = [1.0]  # n = 0: the input itself
    for n in range(1, depth + 1):
        (g,) = torch.autograd.grad(layers[n], xt, retain_graph=True)
        stacked.append(g.item())
    return {
        "name": name, "choices": list(ACTIVATIONS), "x": x, "depth": depth,
        "value": number(value), "slope": number(slope),
        "curve": {"x": numbers(xs), "y": numbers(ys), "slope": numbers(slopes)},
        "stacked": {"n": list(range(depth + 1)), "grad": numbers(stacked)},
    }


# ---- 3. gradient check ------------------------------------------------------------------------

CHECK_FUNCTIONS = {
    "tanh(x**3 + 2*x + 1)": lambda x: torch.tanh(x ** 3 + 2 * x + 1),
    "exp(x) * sin(x)": lambda x: torch.exp(x) * torch.sin(x),
    "log(1 + x**2)": lambda x: torch.log(1 + x ** 2),
}
STEPS = 10.0 ** np.linspace(-1, -14, 53)  # four steps per decade


def gradient_check(fn="tanh(x**3 + 2*x + 1)", x=0.5, h=1e-5):
    """|one-sided − exact| and |central − exact| as h sweeps 1e-1 … 1e-14 (float64), from
    ``gradwalk.autograd.gradcheck_sweep``. Large h: truncation error (∝ h and ∝ h²); small h:
    cancellation in f(x+h) − f(x) (∝ ε/h). Plus both estimates at the chosen h."""
    from gradwalk.autograd.gradcheck import gradcheck_sweep

    f = choose("function", CHECK_FUNCTIONS, fn)
    check_range("x", x, -3.0, 3.0)
    check_range("h", h, 1e-14, 1e-1)
    sweep = gradcheck_sweep(f, x, hs=STEPS.tolist(), dtype=F64)
    exact = sweep["exact"]
    fx, fp, fm = value_of(f, x), value_of(f, x + h), value_of(f, x - h)
    one_sided, central = (fp - fx) / h, (fp - fm) / (2 * h)

    def best(kind):
        return {"h": sweep["best_h"][kind], "error": sweep["best_error"][kind],
                "index": sweep["hs"].index(sweep["best_h"][kind]), **sweep["regions"][kind]}

    return {
        "fn": fn, "choices": list(CHECK_FUNCTIONS), "x": x, "exact": exact,
        "h": sweep["hs"], "one_sided_error": sweep["forward_errors"],
        "central_error": sweep["central_errors"],
        "best_one_sided": best("forward"), "best_central": best("central"),
        "at": {"h": h, "one_sided": number(one_sided), "central": number(central),
               "one_sided_error": number(abs(one_sided - exact)),
               "central_error": number(abs(central - exact))},
        "epsilon": sweep["machine_epsilon"],
    }


# ---- 4. learning rate -------------------------------------------------------------------------

# the seeds' loss L = (w*x + b - t)**2 with x = 3, b = 1, t = 5: minimum at w = 4/3;
# curvature 2*x**2 = 18, so gradient descent diverges once lr > 2/18 ≈ 0.111
LR_DATA = {"x": 3.0, "b": 1.0, "t": 5.0}


def learning_rate(lr=0.05, steps=30, w0=2.0):
    """Gradient descent w ← w − lr·dL/dw; each step's gradient from gradwalk beside the
    closed form 2·(w·x + b − t)·x, to show the gradients stay exact even when w diverges."""
    check_range("lr", lr, 0.0, 0.2)
    steps = int(check_range("steps", steps, 1, 100))
    check_range("w0", w0, -5.0, 5.0)
    x, b, t = LR_DATA["x"], LR_DATA["b"], LR_DATA["t"]
    w = leaf(w0)
    ws, losses, grads, exact = [], [], [], []
    for _ in range(steps + 1):
        loss = (w * x + b - t) ** 2
        loss.backward()
        ws.append(w.item())
        losses.append(loss.item())
        grads.append(w.grad.item())
        exact.append(2 * (w.item() * x + b - t) * x)
        with torch.no_grad():
            w -= lr * w.grad
        w.grad = None  # zero_grad, or the next step adds onto this one
    factor = abs(1 - lr * 2 * x * x)
    return {
        "lr": lr, "steps": steps, "w0": w0, "data": LR_DATA,
        "w_star": (t - b) / x, "critical_lr": 2 / (2 * x * x), "contraction": factor,
        "diverges": factor > 1,
        "step": list(range(steps + 1)), "w": numbers(ws), "loss": numbers(losses),
        "grad": numbers(grads), "grad_closed_form": numbers(exact),
        "max_grad_difference": number(max(abs(a - e) for a, e in zip(grads, exact))),
    }


# ---- 5. XOR ---------------------------------------------------------------------------------

XOR_X = [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]
XOR_Y = [-1.0, 1.0, 1.0, -1.0]  # in tanh's range
XOR_STEPS = 100


def xor_init(seed=0):
    """The 2-4-1 MLP's starting weights, uniform in [-1, 1) like micrograd's Neuron, drawn in
    float64 from ``torch.Generator().manual_seed(seed)``: PyTorch seeded the same draws the same."""
    g = torch.Generator().manual_seed(seed)
    shapes = {"W1": (4, 2), "b1": (4,), "W2": (1, 4), "b2": (1,)}
    return {name: torch.empty(shape, dtype=F64).uniform_(-1, 1, generator=g).numpy() for name, shape in shapes.items()}


def xor_forward(params, X):
    hidden = torch.tanh(X @ params["W1"].T + params["b1"])
    return torch.tanh(hidden @ params["W2"].T + params["b2"]).reshape(-1)


def xor_training(lr=0.05, seed=0, steps=XOR_STEPS):
    """Yield ``{"step", "loss"}`` after each step of full-batch gradient descent on
    loss = Σ (model(x) − y)², then ``{"done": True, ...}`` with the decision boundary."""
    check_range("lr", lr, 0.001, 1.0)
    steps = int(check_range("steps", steps, 1, 500))
    params = {k: leaf(v) for k, v in xor_init(int(seed)).items()}
    X, Y = const(XOR_X), const(XOR_Y)
    for step in range(steps):
        loss = ((xor_forward(params, X) - Y) ** 2).sum()
        for p in params.values():
            p.grad = None  # zero_grad, or yesterday adds in
        loss.backward()  # one call fills every gradient
        with torch.no_grad():
            for p in params.values():
                p -= lr * p.grad  # nudge every weight downhill
        yield {"step": step, "loss": number(loss.item())}
    grid = np.linspace(-0.5, 1.5, 41)
    gx, gy = np.meshgrid(grid, grid)  # row j: y = grid[j]
    with torch.no_grad():
        z = xor_forward(params, const(np.stack([gx.ravel(), gy.ravel()], 1))).numpy()
        final = ((xor_forward(params, X) - Y) ** 2).sum().item()
        predictions = xor_forward(params, X).numpy()
    yield {"done": True, "lr": lr, "seed": int(seed), "steps": steps, "final_loss": number(final),
           "points": {"x": XOR_X, "y": XOR_Y, "prediction": numbers(predictions)},
           "boundary": {"axis": numbers(grid), "z": [numbers(row) for row in z.reshape(gx.shape)]}}


def xor(lr=0.05, seed=0, steps=XOR_STEPS):
    """The whole XOR run at once (the page streams ``xor_training`` instead)."""
    events = list(xor_training(lr, seed, steps))
    result = events[-1]
    result["loss"] = [e["loss"] for e in events[:-1]]
    return result


# ---- 6. paths sum ---------------------------------------------------------------------------

class _SendRecorder:
    """An engine observer that writes down every node popped and every gradient sent."""

    def __init__(self, names):
        self.names = names  # node -> readable name ("x", "x*y", ...)
        self.steps = []

    def on_pop(self, task, fn, inputs):
        self.steps.append({"node": self.names.get(fn, fn.name()), "name": fn.name(),
                           "grad_in": [None if g is None else g.item() for g in inputs],
                           "sends": []})

    def on_send(self, task, fn, i, next_fn, input_nr, grad, remaining):
        self.steps[-1]["sends"].append(
            {"to": self.names.get(next_fn, next_fn.name()), "value": None if grad is None else grad.item()})

    def __getattr__(self, name):  # the other observer callbacks are not needed here
        if name.startswith("on_"):
            return lambda *args: None
        raise AttributeError(name)


def paths_sum(x=2.0, y=3.0, z=4.0, bug=False):
    """``L = x*y + x*z`` run backward by gradwalk's engine; every gradient sent is recorded,
    then replayed into the leaves twice: with ``+=`` (the engine's input buffers) and with
    ``=`` (the bug: each arrival overwrites the last). dL/dx = y + z only with ``+=``."""
    xt, yt, zt = leaf(x), leaf(y), leaf(z)
    xy, xz = xt * yt, xt * zt
    L = xy + xz
    names = {L.grad_fn: "L = x*y + x*z", xy.grad_fn: "x*y", xz.grad_fn: "x*z"}
    for name, t in (("x", xt), ("y", yt), ("z", zt)):
        names[t._grad_accumulator()] = name
    recorder = _SendRecorder(names)
    run_backward((L,), (torch.ones_like(L),), False, False, observer=recorder)
    engine_grads = {"x": xt.grad.item(), "y": yt.grad.item(), "z": zt.grad.item()}

    add, assign = {"x": None, "y": None, "z": None}, {"x": None, "y": None, "z": None}
    steps = []
    for step in recorder.steps:
        for send in step["sends"]:
            leaf_name, g = send["to"], send["value"]
            if leaf_name in add and g is not None:
                add[leaf_name] = g if add[leaf_name] is None else add[leaf_name] + g
                assign[leaf_name] = g  # the bug: `grad = g` instead of `grad += g`
        steps.append({**step, "grads_add": dict(add), "grads_assign": dict(assign)})
    shown = assign if bug else add
    return {
        "x": x, "y": y, "z": z, "bug": bug, "L": L.item(), "steps": steps,
        "forward": {"x": x, "y": y, "z": z, "x*y": xy.item(), "x*z": xz.item(), "L = x*y + x*z": L.item()},
        "engine_grads": engine_grads, "grads": shown, "x_grad": shown["x"],
        "expected_x_grad": y + z,
    }


# ---- 7. forward mode ------------------------------------------------------------------------

def forward_mode(x=0.5):
    """Dual numbers (value, derivative) through tanh(x**3 + 2*x + 1), one line at a time, by
    gradwalk's forward-mode AD (each tangent from the op's jvp formula); beside reverse
    mode's dy/dx from backward()."""
    import gradwalk.autograd.forward_ad as fwAD

    check_range("x", x, -3.0, 3.0)
    with fwAD.dual_level():
        xd = fwAD.make_dual(const(x), const(1.0))  # seed: dx/dx = 1
        a = xd ** 3
        b = 2 * xd
        c = a + b
        d = c + 1
        y = torch.tanh(d)
        duals = [fwAD.unpack_dual(t) for t in (xd, a, b, c, d, y)]
    rules = [("x = (x, 1)", "seed: dx/dx = 1"), ("a = x**3", "(x³, 3x²·dx)"), ("b = 2*x", "(2x, 2·dx)"),
             ("c = a + b", "(a + b, da + db)"), ("d = c + 1", "(c + 1, dc)"),
             ("y = tanh(d)", "(tanh d, (1 − tanh² d)·dd)")]
    lines = [{"code": code, "rule": rule, "value": primal.item(), "tangent": tangent.item()}
             for (code, rule), (primal, tangent) in zip(rules, duals)]
    value, tangent = lines[-1]["value"], lines[-1]["tangent"]
    _, reverse = derivative(CHECK_FUNCTIONS["tanh(x**3 + 2*x + 1)"], x)
    return {"x": x, "lines": lines, "value": value, "tangent": tangent, "reverse": reverse,
            "difference": abs(tangent - reverse)}


# ---- 8. dead ReLU ---------------------------------------------------------------------------

def dead_relu(x1=2.0, x2=3.0, b=1.0):
    """y = relu(x1*x2 + b): forward values and every gradient, and the gradients of x1, x2, b
    as b sweeps −10 … 3 (all zero once x1*x2 + b ≤ 0: relu'(0) = 0, as PyTorch)."""
    check_range("b", b, -10.0, 10.0)
    t1, t2, tb = leaf(x1), leaf(x2), leaf(b)
    product = t1 * t2
    z = product + tb
    y = torch.relu(z)
    for t in (product, z, y):
        t.retain_grad()
    y.backward()
    bs = np.linspace(-10, 3, 131)
    s1, s2, sb = leaf(np.full_like(bs, x1)), leaf(np.full_like(bs, x2)), leaf(bs)
    torch.relu(s1 * s2 + sb).sum().backward()
    return {
        "x1": x1, "x2": x2, "b": b, "dead": z.item() <= 0,
        "forward": {"x1*x2": product.item(), "z": z.item(), "y": y.item()},
        "grads": {"y": y.grad.item(), "z": z.grad.item(), "x1*x2": product.grad.item(),
                  "x1": t1.grad.item(), "x2": t2.grad.item(), "b": tb.grad.item()},
        "sweep": {"b": numbers(bs), "x1": numbers(s1.grad.numpy()), "x2": numbers(s2.grad.numpy()),
                  "b_grad": numbers(sb.grad.numpy())},
    }


FIGURES = {
    "chain-rule": chain_rule,
    "activation": activation,
    "gradient-check": gradient_check,
    "learning-rate": learning_rate,
    "xor": xor,
    "paths-sum": paths_sum,
    "forward-mode": forward_mode,
    "dead-relu": dead_relu,
}
