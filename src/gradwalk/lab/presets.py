"""The lab's example snippets, taken from the seed lessons (see /work/shared/seeds)."""

PRESETS = [
    {
        "id": "neuron",
        "title": "A neuron: y = tanh(w*x + b)",
        "source": """\
w = torch.tensor(0.5, requires_grad=True)
x = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(-0.3, requires_grad=True)
y = torch.tanh(w * x + b)
y.backward()
""",
    },
    {
        "id": "mixed",
        "title": "Our mixed example: + - * / ** tanh exp log sin cos sigmoid relu",
        "source": """\
# every leaf is used twice, so each AccumulateGrad waits for two gradients
p = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
q = torch.tensor(1.3, dtype=torch.float64, requires_grad=True)
r = torch.tensor(0.4, dtype=torch.float64, requires_grad=True)
t1 = p + q
t2 = t1 - r
t3 = t2 * p
t4 = t3 / q
t5 = t4 ** 2
t6 = torch.tanh(t5)
t7 = torch.exp(t6)
t8 = torch.log(t7 + 1.0)
t9 = torch.sin(t8) + torch.cos(r)
t10 = torch.sigmoid(t9)
out = torch.relu(t10 - 0.5)
out.backward()
""",
    },
    {
        "id": "squared-error",
        "title": "A squared error: L = (w*x + b - t)**2",
        "source": """\
w = torch.tensor(0.5, requires_grad=True)
x = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(0.1, requires_grad=True)
t = torch.tensor(2.0)  # the target: no gradient needed
L = (w * x + b - t) ** 2
L.backward()
""",
    },
    {
        "id": "two-paths",
        "title": "Gradients summed over paths: L = x*y + x*z",
        "source": """\
# x reaches L along two paths; its gradient is the sum, y + z = 7
x = torch.tensor(2.0, requires_grad=True)
y = torch.tensor(3.0, requires_grad=True)
z = torch.tensor(4.0, requires_grad=True)
L = x * y + x * z
L.backward()
""",
    },
    {
        "id": "relu",
        "title": "ReLU: y = relu(x1*x2 + b)",
        "source": """\
x1 = torch.tensor(2.0, requires_grad=True)
x2 = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(1.0, requires_grad=True)
y = torch.relu(x1 * x2 + b)
y.backward()
""",
    },
    {
        "id": "dead-relu",
        "title": "A dead ReLU: b = -10",
        "source": """\
# the pre-activation is negative, so ReLU's slope is 0 and every gradient upstream dies
x1 = torch.tensor(2.0, requires_grad=True)
x2 = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(-10.0, requires_grad=True)
y = torch.relu(x1 * x2 + b)
y.backward()
""",
    },
    {
        "id": "broadcasting",
        "title": "Tensors and broadcasting: tanh(W*x + b).sum()",
        "source": """\
# x (3,) is broadcast over W's rows and b (2, 1) over its columns;
# the engine sums their gradients back down to their own shapes
W = torch.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]], requires_grad=True)
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor([[0.5], [-0.5]], requires_grad=True)
h = torch.tanh(W * x + b)
loss = h.sum()
loss.backward()
""",
    },
]


def presets():
    """The presets as ``GET /api/presets`` sends them."""
    return [dict(p) for p in PRESETS]
