# label: hazard silent
# why: the manual SGD step on the shared head through p.data runs before backward of the second loss, whose graph saved the head weight, so that backward silently uses the updated weight.
import torch
import torch.nn as nn

torch.manual_seed(0)

enc = nn.Linear(5, 8)
head = nn.Linear(8, 1)
x = torch.randn(10, 5)
ya = torch.randn(10, 1)
yb = torch.randn(10, 1)
lr = 0.5

h = torch.tanh(enc(x))
out = head(h)
loss_a = nn.functional.mse_loss(out, ya)
loss_b = nn.functional.l1_loss(out, yb)

loss_a.backward(retain_graph=True)
for p in head.parameters():
    p.data.sub_(lr * p.grad)  # <-- IPL007: no version bump, loss_b's graph saved head.weight
    p.grad = None
enc.weight.grad = None
loss_b.backward()
