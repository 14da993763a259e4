# label: safe
# why: the preallocated KV-cache buffers are written in place only under torch.no_grad(), and the current step's keys/values are used directly for the gradient path.
import torch
import torch.nn as nn


class CachedSelfAttention(nn.Module):
    def __init__(self, dim, max_len):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * dim)
        self.out = nn.Linear(dim, dim)
        self.scale = dim ** -0.5
        self.register_buffer("k_cache", torch.zeros(1, max_len, dim), persistent=False)
        self.register_buffer("v_cache", torch.zeros(1, max_len, dim), persistent=False)

    def forward(self, x, pos):
        # x: (1, 1, dim) -- one decoding step
        q = self.q(x)
        k, v = self.kv(x).chunk(2, dim=-1)
        with torch.no_grad():
            self.k_cache[:, pos] = k[:, 0]
            self.v_cache[:, pos] = v[:, 0]
        past_k = self.k_cache[:, :pos]
        past_v = self.v_cache[:, :pos]
        keys = torch.cat([past_k, k], dim=1)
        values = torch.cat([past_v, v], dim=1)
        attn = (q @ keys.transpose(1, 2) * self.scale).softmax(dim=-1)
        return self.out(attn @ values)


torch.manual_seed(0)
layer = CachedSelfAttention(dim=6, max_len=8)
tokens = torch.randn(1, 4, 6)
outs = [layer(tokens[:, t:t + 1], t) for t in range(tokens.shape[1])]
out = torch.cat(outs, dim=1)
loss = out.pow(2).sum()
loss.backward()
