# label: hazard raises
# why: fast_w/fast_b alias the meta-parameters (requires_grad leaves); the inner-loop sub_ is an in-place write to a leaf
import torch
import torch.nn.functional as F

torch.manual_seed(0)
w = torch.randn(5, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
meta_opt = torch.optim.Adam([w, b], lr=1e-3)
inner_lr = 0.1
inner_steps = 2

xs, ys = torch.randn(10, 5), torch.randn(10, 1)
xq, yq = torch.randn(10, 5), torch.randn(10, 1)

fast_w, fast_b = w, b
for step in range(inner_steps):
    support_loss = F.mse_loss(xs @ fast_w + fast_b, ys)
    gw, gb = torch.autograd.grad(support_loss, (fast_w, fast_b), create_graph=True)
    fast_w.sub_(inner_lr * gw)  # <-- IPL003
    fast_b.sub_(inner_lr * gb)  # <-- IPL003

query_loss = F.mse_loss(xq @ fast_w + fast_b, yq)
meta_opt.zero_grad()
query_loss.backward()
w_grad = w.grad.clone()
meta_opt.step()
w_after = w.detach().clone()
