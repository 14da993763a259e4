# label: safe
# why: fast weights are built out of place, the meta loss accumulator is a fresh non-leaf tensor, and meta-gradients are clamped only after backward
import torch
import torch.nn.functional as F

torch.manual_seed(0)
w = torch.randn(5, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
meta_opt = torch.optim.Adam([w, b], lr=1e-2)
inner_lr = 0.1
n_tasks = 3

meta_loss = torch.zeros(())
for task in range(n_tasks):
    xs, ys = torch.randn(10, 5), torch.randn(10, 1)
    xq, yq = torch.randn(10, 5), torch.randn(10, 1)
    fast_w, fast_b = w, b
    for step in range(2):
        support_loss = F.mse_loss(xs @ fast_w + fast_b, ys)
        gw, gb = torch.autograd.grad(support_loss, (fast_w, fast_b), create_graph=True)
        fast_w = fast_w - inner_lr * gw
        fast_b = fast_b - inner_lr * gb
    meta_loss += F.mse_loss(xq @ fast_w + fast_b, yq)
meta_loss /= n_tasks

meta_opt.zero_grad()
meta_loss.backward()
w.grad.clamp_(-1.0, 1.0)
b.grad.clamp_(-1.0, 1.0)
w_grad = w.grad.clone()
meta_opt.step()
w_after = w.detach().clone()
