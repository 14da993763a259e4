# label: hazard raises
# why: the input batch does not require grad, but the first Linear saved it to compute its weight gradient; augmenting it in place before backward breaks that
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 1))
batch = torch.randn(8, 6)
target = torch.randn(8, 1)

pred = model(batch)
batch.mul_(torch.rand(8, 1))  # <-- IPL001
pred_aug = model(batch)
loss = (pred - target).pow(2).mean() + (pred_aug - pred).pow(2).mean()
loss.backward()
