# label: hazard raises
# why: the world-model KV cache writes each new chunk of keys/values into a preallocated buffer with a slice assignment, which bumps the version of the whole buffer whose earlier slice the previous chunk's attention saved.
# source: https://discuss.pytorch.org/t/disable-in-place-correctness-version-check-any-other-workaround/90738
import math
from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Cache:
    def __init__(self, num_samples: int, max_tokens: int, embed_dim: int, device: torch.device) -> None:
        self._n, self._cache, self._size = num_samples, None, None
        self._reset = lambda n: torch.zeros(n, max_tokens, embed_dim, device=device)  # (B, T, E)
        self.reset()

    @property
    def shape(self) -> Tuple[int, int, int]:
        n, _, embed_dim = self._cache.shape
        return n, self._size, embed_dim

    def reset(self) -> None:
        self._cache = self._reset(self._n)
        self._size = 0

    def get(self) -> torch.Tensor:
        return self._cache[:, :self._size, :]

    def update(self, x: torch.Tensor) -> None:
        assert (x.ndim == self._cache.ndim) and all([x.size(i) == self._cache.size(i) for i in (0, 2)])
        assert self._size + x.size(1) <= self._cache.shape[1]
        self._cache[:, self._size:self._size + x.size(1), :] = x  # <-- IPL001: bumps the version of the cache whose earlier slice q @ k^T saved
        self._size += x.size(1)


class KVCache:
    def __init__(self, n: int, max_tokens: int, embed_dim: int, device: torch.device) -> None:
        self._k_cache = Cache(n, max_tokens, embed_dim, device)
        self._v_cache = Cache(n, max_tokens, embed_dim, device)

    @property
    def shape(self) -> Tuple[int, int, int]:
        return self._k_cache.shape

    def reset(self) -> None:
        self._k_cache.reset()
        self._v_cache.reset()

    def get(self) -> Tuple[torch.Tensor, torch.Tensor]:
        return self._k_cache.get(), self._v_cache.get()

    def update(self, k: torch.Tensor, v: torch.Tensor):
        self._k_cache.update(k)
        self._v_cache.update(v)


class SelfAttention(nn.Module):
    def __init__(self, embed_dim: int, max_tokens: int) -> None:
        super().__init__()
        self.key = nn.Linear(embed_dim, embed_dim)
        self.query = nn.Linear(embed_dim, embed_dim)
        self.value = nn.Linear(embed_dim, embed_dim)
        self.proj = nn.Linear(embed_dim, embed_dim)
        self.register_buffer('mask', torch.tril(torch.ones(max_tokens, max_tokens)))

    def forward(self, x: torch.Tensor, kv_cache=None) -> torch.Tensor:
        B, T, C = x.size()
        L = kv_cache.shape[1] if kv_cache is not None else 0
        q = self.query(x)
        k = self.key(x)
        v = self.value(x)
        if kv_cache is not None:
            kv_cache.update(k, v)
            k, v = kv_cache.get()
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[L:L + T, :L + T] == 0, float('-inf'))
        att = F.softmax(att, dim=-1)
        y = att @ v
        return self.proj(y)


embed_dim, max_tokens = 8, 6
attn = SelfAttention(embed_dim, max_tokens)
kv_cache = KVCache(n=2, max_tokens=max_tokens, embed_dim=embed_dim, device=torch.device('cpu'))
chunks = [torch.randn(2, 2, embed_dim) for _ in range(3)]
outputs = []
for x in chunks:  # burn-in / imagination: feed the sequence chunk by chunk
    outputs.append(attn(x, kv_cache))
loss = torch.cat(outputs, dim=1).pow(2).mean()
loss.backward()
