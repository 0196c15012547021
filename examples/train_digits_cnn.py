"""A small CNN on scikit-learn's 8x8 digits: `python examples/train_digits_cnn.py` (about 98%;
`--torch`: the same on PyTorch)."""
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
images = (digits.data / 16.0).reshape(-1, 1, 8, 8)
x_train, x_test, y_train, y_test = train_test_split(
    images, digits.target, test_size=0.2, random_state=0, stratify=digits.target)
train_set = TensorDataset(torch.tensor(x_train, dtype=torch.float32), torch.tensor(y_train))
loader = DataLoader(train_set, batch_size=32, shuffle=True, generator=torch.Generator().manual_seed(0))
x_test, y_test = torch.tensor(x_test, dtype=torch.float32), torch.tensor(y_test)

model = nn.Sequential(
    nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
    nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))
epochs = 30
opt = torch.optim.Adam(model.parameters(), lr=2e-3)
schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)

for epoch in range(epochs):
    model.train()
    for xb, yb in loader:
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    schedule.step()
    model.eval()
    with torch.no_grad():
        accuracy = (model(x_test).argmax(1) == y_test).float().mean().item()
    print(f"epoch {epoch + 1:2d}  loss {loss.item():.4f}  test accuracy {accuracy:.2%}")
