# label: hazard raises
# why: the noise is added to a leaf tensor that requires grad with an in-place add_, which autograd rejects outside torch.no_grad()
# source: https://github.com/pytorch/pytorch/issues/2940
import torch

torch.manual_seed(0)

a = torch.rand(5, 5, requires_grad=True)
noise = torch.randn(5, 5) * 0.1


def perturb(weights, noise):
    weights.add_(noise)  # <-- IPL003: weights is the leaf `a`, which requires grad
    return weights


perturbed = perturb(a, noise)
loss = perturbed.pow(2).sum()
loss.backward()
a_grad = a.grad
