# label: hazard raises
# why: a hand-rolled Adam step (torch imported as T) updates each nn.Parameter with p.addcdiv_ and no T.no_grad(), so the first update raises the leaf in-place error.
import math

import torch as T
from torch import nn as tnn

T.manual_seed(0)

net = tnn.Sequential(tnn.Linear(3, 8), tnn.Tanh(), tnn.Linear(8, 1))
state = {p: (T.zeros_like(p), T.zeros_like(p)) for p in net.parameters()}
lr, b1, b2, eps = 1e-2, 0.9, 0.999, 1e-8

x = T.randn(10, 3)
y = T.randn(10, 1)
for t in range(1, 3):
    loss = tnn.functional.mse_loss(net(x), y)
    net.zero_grad()
    loss.backward()
    for p in net.parameters():
        m, v = state[p]
        m = b1 * m + (1 - b1) * p.grad
        v = b2 * v + (1 - b2) * p.grad * p.grad
        state[p] = (m, v)
        step = lr * math.sqrt(1 - b2**t) / (1 - b1**t)
        p.addcdiv_(m, v.sqrt() + eps, value=-step)  # <-- IPL003: Parameter updated in place with grad mode on

final_loss = tnn.functional.mse_loss(net(x), y).detach()
