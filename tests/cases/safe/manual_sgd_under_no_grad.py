# label: safe no-twin
# why: the hand-written SGD update and the grad reset are in-place parameter/grad writes inside torch.no_grad(), after backward
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
x = torch.randn(10, 3)
y = torch.randn(10, 1)
lr = 0.1

for epoch in range(3):
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= lr * p.grad
            p.grad.zero_()
