# label: safe
# why: the L2-regularized SGD update is applied in place to the parameters only after backward and inside torch.no_grad(), and the evaluation pass runs afterwards.
import torch
import torch.nn.functional as F

torch.manual_seed(0)

w = torch.randn(4, 3, requires_grad=True)
b = torch.zeros(3, requires_grad=True)
lr, wd = 0.1, 1e-2

x = torch.randn(6, 4)
y = torch.randint(0, 3, (6,))
x_val = torch.randn(3, 4)


def forward(x, w, b):
    return torch.tanh(x @ w) + b


logits = forward(x, w, b)
loss = F.cross_entropy(logits, y)
loss.backward()

with torch.no_grad():
    w.sub_(lr * (w.grad + wd * w))
    b.sub_(lr * b.grad)
    val_logits = forward(x_val, w, b)
