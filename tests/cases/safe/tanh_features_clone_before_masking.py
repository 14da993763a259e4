# label: safe
# why: the tanh output is cloned before its first column is zeroed, so TanhBackward's saved output stays intact and the unmasked features are still read correctly.
import torch
import torch.nn as nn

torch.manual_seed(0)

enc = nn.Linear(5, 4)
head_a = nn.Linear(4, 1)
head_b = nn.Linear(4, 1)
x = torch.randn(3, 5)

feats = torch.tanh(enc(x))
masked = feats.clone()
masked[:, 0] = 0.0
masked.narrow(1, 1, 1).mul_(0.5)

out = head_a(masked) + head_b(feats)
loss = out.pow(2).sum()
loss.backward()
grad_enc = enc.weight.grad
