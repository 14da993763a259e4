# label: hazard raises
# why: hand-written SGD update `p -= lr * p.grad` runs outside torch.no_grad(), an in-place op on a parameter leaf
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
x = torch.randn(10, 3)
y = torch.randn(10, 1)
lr = 0.1

for epoch in range(2):
    loss = nn.functional.mse_loss(model(x), y)
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p -= lr * p.grad  # <-- IPL003
