# label: safe
# why: the MAML inner loop builds fast weights out of place from autograd.grad(create_graph=True), and the meta-loss is accumulated with += into a fresh zero tensor.
import torch

torch.manual_seed(0)
w = torch.randn(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
inner_lr = 0.1
tasks = []
for _ in range(3):
    true_w = torch.randn(3, 1)
    xs, xq = torch.randn(10, 3), torch.randn(10, 3)
    tasks.append((xs, xs @ true_w, xq, xq @ true_w))

meta_loss = torch.zeros(())
for xs, ys, xq, yq in tasks:
    fast_w, fast_b = w, b
    for _ in range(2):
        inner = ((xs @ fast_w + fast_b - ys) ** 2).mean()
        gw, gb = torch.autograd.grad(inner, (fast_w, fast_b), create_graph=True)
        fast_w = fast_w - inner_lr * gw
        fast_b = fast_b - inner_lr * gb
    meta_loss += ((xq @ fast_w + fast_b - yq) ** 2).mean()
meta_loss /= len(tasks)
meta_loss.backward()
