"""micrograd's moons demo on gradwalk: `python examples/train_moons.py` (`--torch`: on PyTorch)."""
import sys

if "--torch" in sys.argv[1:]:  # the same script on real PyTorch
    import torch
else:
    import gradwalk as torch

from sklearn.datasets import make_moons

nn, F = torch.nn, torch.nn.functional

torch.manual_seed(0)
xs, ys = make_moons(n_samples=100, noise=0.1, random_state=0)
x = torch.tensor(xs, dtype=torch.float32)
y = torch.tensor(ys * 2 - 1, dtype=torch.float32).reshape(-1, 1)  # -1 / +1
model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=1.0)
steps = 200
schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: 1.0 - 0.9 * k / steps)

for k in range(steps):
    scores = model(x)
    loss = F.relu(1 - y * scores).mean() + 1e-4 * sum((p * p).sum() for p in model.parameters())
    opt.zero_grad()
    loss.backward()
    opt.step()
    schedule.step()

accuracy = ((scores > 0) == (y > 0)).float().mean().item()
print(f"loss {loss.item():.4f}, accuracy {accuracy:.0%}")
