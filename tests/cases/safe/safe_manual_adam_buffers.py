# label: safe no-twin
# why: a hand-rolled Adam with LR warmup keeps its moment buffers as fresh tensors and updates them and the parameters under no_grad after each backward.
import math
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 10), nn.Tanh(), nn.Linear(10, 1))
params = list(model.parameters())
x = torch.randn(20, 5)
y = torch.randn(20, 1)
beta1, beta2, eps, base_lr, warmup = 0.9, 0.999, 1e-8, 1e-2, 3
m = [torch.zeros_like(p) for p in params]
v = [torch.zeros_like(p) for p in params]

for step in range(1, 5):
    lr = base_lr * min(1.0, step / warmup)
    loss = (model(x) - y).pow(2).mean()
    for p in params:
        p.grad = None
    loss.backward()
    with torch.no_grad():
        for p, m_i, v_i in zip(params, m, v):
            m_i.mul_(beta1).add_(p.grad, alpha=1 - beta1)
            v_i.mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
            m_hat = m_i / (1 - beta1 ** step)
            v_hat = v_i / (1 - beta2 ** step)
            p.addcdiv_(m_hat, v_hat.sqrt().add_(eps), value=-lr)
