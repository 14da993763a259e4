# label: safe
# why: in-place Dropout follows a Linear (which saves its input, not its output) and the in-place ReLU after it is not read by anything that saved its input.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

mlp = nn.Sequential(
    nn.Linear(10, 32),
    nn.Dropout(p=0.25, inplace=True),
    nn.ReLU(inplace=True),
    nn.Linear(32, 32),
    nn.BatchNorm1d(32),
    nn.ReLU(inplace=True),
    nn.Linear(32, 3),
)
x = torch.randn(16, 10)
y = torch.randint(0, 3, (16,))
loss = F.cross_entropy(mlp(x), y)
loss.backward()
