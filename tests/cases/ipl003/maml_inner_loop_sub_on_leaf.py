# label: hazard raises
# why: the MAML inner loop adapts the meta-parameter leaf with sub_ outside no_grad, which torch forbids for leaves requiring grad.
import torch

torch.manual_seed(0)

w = torch.randn(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
inner_lr = 0.1


def task_loss(w, b, x, y):
    return ((x @ w + b - y) ** 2).mean()


tasks = [(torch.randn(4, 3), torch.randn(4, 1), torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
meta_loss = torch.tensor(0.0)
for xs, ys, xq, yq in tasks:
    fast_w = w
    support = task_loss(fast_w, b, xs, ys)
    (g,) = torch.autograd.grad(support, fast_w, create_graph=True)
    fast_w.sub_(inner_lr * g)  # <-- IPL003
    meta_loss = meta_loss + task_loss(fast_w, b, xq, yq)

meta_loss.backward()
loss = meta_loss.detach()
