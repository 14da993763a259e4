# label: hazard silent
# why: the cache tuple holds k itself, so `k *= self.scale` stores pre-scaled keys and the next decoding step scales them a second time.
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class CachedAttention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.scale = 1.0 / math.sqrt(d)
        self.cache = None

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        if self.cache is not None:
            k = torch.cat([self.cache[0], k], dim=1)
            v = torch.cat([self.cache[1], v], dim=1)
        self.cache = (k, v)
        k *= self.scale  # <-- IPL002: self.cache[0] is the same tensor
        attn = (q @ k.transpose(-2, -1)).softmax(-1)
        return attn @ v


attn = CachedAttention(8)
prompt = torch.randn(1, 5, 8)
nxt = torch.randn(1, 1, 8)
with torch.no_grad():
    prefill_out = attn(prompt)
    step_out = attn(nxt)
cached_keys = attn.cache[0]
