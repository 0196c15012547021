"""An MLP on scikit-learn's 8x8 digits: `python examples/train_digits.py` (96.94%, as on PyTorch:
add `--torch`)."""
import sys

if "--torch" in sys.argv[1:]:  # the same script on real PyTorch
    import torch
else:
    import gradwalk as torch

from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

nn, F = torch.nn, torch.nn.functional
DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset

torch.manual_seed(0)
digits = load_digits()
x_train, x_test, y_train, y_test = train_test_split(
    digits.data / 16.0, digits.target, test_size=0.2, random_state=0, stratify=digits.target)
train_set = TensorDataset(torch.tensor(x_train, dtype=torch.float32), torch.tensor(y_train))
loader = DataLoader(train_set, batch_size=32, shuffle=True, generator=torch.Generator().manual_seed(0))
x_test, y_test = torch.tensor(x_test, dtype=torch.float32), torch.tensor(y_test)

model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10))
epochs = 40
opt = torch.optim.Adam(model.parameters(), lr=2e-3)
schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)

for epoch in range(epochs):
    for xb, yb in loader:
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    schedule.step()
    with torch.no_grad():
        accuracy = (model(x_test).argmax(1) == y_test).float().mean().item()
    print(f"epoch {epoch + 1:2d}  loss {loss.item():.4f}  test accuracy {accuracy:.2%}")

torch.save(model.state_dict(), "digits-mlp.pt")  # gradwalk writes a zip of JSON + .npy: loading runs no code
