# label: hazard silent
# why: apply_key_mask writes -1e4 into the caller's raw scores, so the z-loss the caller computes afterwards on the unmasked logits is dominated by the fill value.
import math
import torch
import torch.nn as nn

torch.manual_seed(0)


def apply_key_mask(scores, key_mask):
    scores.masked_fill_(~key_mask[:, None, :], -1e4)  # <-- IPL004: caller reads scores again
    return scores.softmax(dim=-1)


dim = 8
qkv = nn.Linear(dim, 3 * dim)
proj = nn.Linear(dim, dim)

x = torch.randn(2, 6, dim)
key_mask = torch.tensor([[True] * 6, [True, True, True, True, False, False]])
q, k, v = qkv(x).chunk(3, dim=-1)
scores = q @ k.transpose(-2, -1) / math.sqrt(dim)
attn = apply_key_mask(scores, key_mask)
out = proj(attn @ v)
# auxiliary z-loss on the raw attention logits (keeps them small)
z_loss = scores.logsumexp(dim=-1).pow(2).mean()
loss = out.pow(2).mean() + 1e-4 * z_loss
loss.backward()
