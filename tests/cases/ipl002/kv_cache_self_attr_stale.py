# label: hazard silent
# why: the raw key is appended to self.cache_k and then scaled in place, so the cache (meant to hold unscaled keys) sees the scaled key and it is scaled twice
import torch
import torch.nn as nn

torch.manual_seed(0)


class CachedAttention(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.o_proj = nn.Linear(dim, dim)
        self.scale = dim**-0.5
        self.cache_k = []
        self.cache_v = []

    def forward(self, x):
        q = self.q_proj(x)
        k = self.k_proj(x)
        v = self.v_proj(x)
        self.cache_k.append(k)  # unscaled keys; scaled when read below
        self.cache_v.append(v)
        k.mul_(self.scale)  # <-- IPL002
        self_score = (q * k).sum(-1, keepdim=True)
        keys = torch.cat(self.cache_k, dim=1) * self.scale
        values = torch.cat(self.cache_v, dim=1)
        scores = q @ keys.transpose(1, 2)
        attn = torch.cat([scores, self_score], dim=-1).softmax(-1)[..., :-1]
        return self.o_proj(attn @ values)


layer = CachedAttention()
outputs = []
for step in range(3):
    token = torch.randn(2, 1, 16)
    outputs.append(layer(token))
out = torch.cat(outputs, dim=1)
loss = out.pow(2).mean()
loss.backward()
grad_k = layer.k_proj.weight.grad.clone()
grad_q = layer.q_proj.weight.grad.clone()
