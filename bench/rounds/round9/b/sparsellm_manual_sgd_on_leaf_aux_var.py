# label: hazard raises no-twin
# why: the auxiliary variable s_batch is a leaf created with requires_grad=True, and the manual gradient step `s_batch -= lr * s_batch.grad` updates it in place outside torch.no_grad().
# source: https://github.com/BaiTheBest/SparseLLM/issues/13
import torch
import torch.nn as nn

torch.manual_seed(0)


def update_s(layer_weight, s_target, z_target, s, chunk, s_learning_rate=0.1, iters=2):
    s_batch = s[:, chunk].clone().float().requires_grad_(True)
    for _ in range(iters):
        pred = torch.relu(s_batch) @ layer_weight.t()
        loss_s = ((pred - z_target[:, chunk]) ** 2).mean() + ((s_batch - s_target[:, chunk]) ** 2).mean()
        loss_s.backward()
        s_batch -= s_learning_rate * s_batch.grad  # <-- IPL003: in-place update of a leaf that requires grad
        s_batch.grad.zero_()
    s[:, chunk] = s_batch.detach().to(dtype=s.dtype)
    return s


fc1 = nn.Linear(4, 4, bias=False)
fc2 = nn.Linear(4, 4, bias=False)
inputs = torch.randn(2, 3, 4)
with torch.no_grad():
    s = fc1(inputs)
    z = fc2(torch.relu(s))
s = update_s(fc2.weight.detach(), s.clone(), z, s, chunk=slice(0, 3))
