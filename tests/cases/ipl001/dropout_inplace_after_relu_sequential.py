# label: hazard raises
# why: Dropout(inplace=True) after a (non-inplace) ReLU masks the ReLU output that ReluBackward saved
import torch
import torch.nn as nn

torch.manual_seed(0)

mlp = nn.Sequential(
    nn.Linear(10, 16),
    nn.ReLU(),
    nn.Dropout(p=0.3, inplace=True),  # <-- IPL001
    nn.Linear(16, 2),
)

x = torch.randn(4, 10)
target = torch.tensor([0, 1, 1, 0])
loss = nn.functional.cross_entropy(mlp(x), target)
loss.backward()
