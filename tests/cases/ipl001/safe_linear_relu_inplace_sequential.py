# label: safe
# why: Linear saves its input, not its output, so the in-place ReLU on the Linear output touches nothing saved.
import torch
import torch.nn as nn

torch.manual_seed(0)

mlp = nn.Sequential(
    nn.Linear(6, 32),
    nn.ReLU(inplace=True),
    nn.Linear(32, 32),
    nn.ReLU(inplace=True),
    nn.Dropout(0.0, inplace=True),
    nn.Linear(32, 3),
)
x = torch.randn(7, 6)
labels = torch.tensor([0, 1, 2, 0, 1, 2, 0])
logits = mlp(x)
loss = nn.functional.cross_entropy(logits, labels)
loss.backward()
