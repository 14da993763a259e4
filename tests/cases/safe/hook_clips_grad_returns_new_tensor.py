# label: safe
# why: the tensor hook clones the incoming gradient before clamping it in place and returns the new tensor, never editing autograd's buffer
import torch
import torch.nn as nn

torch.manual_seed(0)
enc = nn.Linear(6, 10)
dec = nn.Linear(10, 3)
x = torch.randn(5, 6, requires_grad=True)
y = torch.randn(5, 3)

clip_log = []


def clip_grad_hook(grad):
    clipped = grad.clone()
    clipped.clamp_(-0.05, 0.05)
    clip_log.append((grad - clipped).abs().sum().item())
    return clipped


h = torch.tanh(enc(x))
h.register_hook(clip_grad_hook)
side = h.sum(dim=1, keepdim=True)
pred = dec(h) + side
loss = ((pred - y) ** 2).mean()
loss.backward()

x_grad = x.grad.clone()
enc_grad = enc.weight.grad.clone()
