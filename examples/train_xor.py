"""The seeds' XOR network, in plain PyTorch style: `python examples/train_xor.py`.
(The same run as `gradwalk train xor`.) Add `--torch` to run it on PyTorch: same output."""
import sys

if "--torch" in sys.argv[1:]:  # the same script on real PyTorch
    import torch
else:
    import gradwalk as torch

nn = torch.nn

torch.manual_seed(0)
x = torch.tensor([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
y = torch.tensor([[-1.], [1.], [1.], [-1.]])  # XOR, in tanh's range
model = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1), nn.Tanh())
opt = torch.optim.SGD(model.parameters(), lr=0.05)

for step in range(300):
    loss = ((model(x) - y) ** 2).sum()
    opt.zero_grad()  # or yesterday's gradients add in
    loss.backward()  # one call fills every gradient
    opt.step()  # nudge every weight downhill

print(f"loss {loss.item():.4f}")
print("predictions", [round(p, 4) for p in model(x).detach().flatten().tolist()])
