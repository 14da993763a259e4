# label: safe
# why: masked_fill_ is applied to a freshly allocated additive mask that no autograd op has saved or aliased
import torch
import torch.nn as nn

torch.manual_seed(0)


def additive_key_mask(pad, n_heads, q_len):
    b, k_len = pad.shape
    mask = torch.zeros(b, 1, 1, k_len)
    mask.masked_fill_(pad[:, None, None, :], float("-inf"))
    return mask.expand(b, n_heads, q_len, k_len)


n_heads, d = 2, 8
embed = nn.Embedding(12, d)
qk = nn.Linear(d, 2 * d)
ids = torch.tensor([[3, 5, 7, 0], [2, 9, 0, 0]])
pad = ids == 0

h = embed(ids)
q, k = qk(h).view(2, 4, 2, n_heads, d // n_heads).permute(2, 0, 3, 1, 4)
scores = q @ k.transpose(-1, -2) / (d // n_heads) ** 0.5
scores = scores + additive_key_mask(pad, n_heads, 4)
attn = scores.softmax(-1)
pooled = (attn @ k).mean(dim=(1, 2))
loss = pooled.pow(2).sum()
loss.backward()
embed_grad = embed.weight.grad
