# label: hazard silent
# why: retain_grad() and a hook are registered on an activation that is then scaled in place, so the retained .grad is taken w.r.t. the scaled version while the hook still sees the pre-scaling gradient
# source: https://github.com/pytorch/pytorch/pull/79767
import torch

torch.manual_seed(0)

grad1 = [None]
grad2 = [None]


def hook1(grad):
    grad1[0] = grad


def hook2(grad):
    grad2[0] = grad


param = torch.tensor([1.0, -0.5, 2.0], requires_grad=True)
a = param.clone()
acts = {"a": a}

a.register_hook(hook1)
a.retain_grad()

a.mul_(2)  # <-- IPL006: the retain_grad target is overwritten in place, so acts["a"].grad no longer means d(out)/d(a)

b = a.clone()
b.register_hook(hook2)

out = (b + 1).pow(2).sum()
out.backward()

hook_before = grad1[0]
hook_after = grad2[0]
retained = acts["a"].grad
