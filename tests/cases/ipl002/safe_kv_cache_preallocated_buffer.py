# label: safe
# why: keys are scaled out of place and written into a preallocated torch.zeros cache, whose new contents are exactly what later decoding steps should read.
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class CachedAttention(nn.Module):
    def __init__(self, d, max_len=8):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.scale = 1.0 / math.sqrt(d)
        self.k_cache = torch.zeros(1, max_len, d)
        self.v_cache = torch.zeros(1, max_len, d)
        self.pos = 0

    def forward(self, x):
        n = x.shape[1]
        q, k, v = self.q(x), self.k(x), self.v(x)
        k = k * self.scale
        self.k_cache[:, self.pos:self.pos + n] = k
        self.v_cache[:, self.pos:self.pos + n] = v
        self.pos += n
        keys = self.k_cache[:, :self.pos]
        vals = self.v_cache[:, :self.pos]
        attn = (q @ keys.transpose(-2, -1)).softmax(-1)
        return attn @ vals


attn = CachedAttention(8)
prompt = torch.randn(1, 5, 8)
nxt = torch.randn(1, 1, 8)
with torch.no_grad():
    prefill_out = attn(prompt)
    step_out = attn(nxt)
cached_keys = attn.k_cache.clone()
