# label: safe
# why: HF GPT-style eager attention adds the causal/padding mask in place to `matmul(q, k) / sqrt(d)` (a division by a Python float, saving nothing) and only then calls softmax.
import math

import torch
from torch import nn
from torch.nn import functional as F


class GPTAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.c_attn = nn.Linear(hidden_size, 3 * hidden_size)
        self.c_proj = nn.Linear(hidden_size, hidden_size)
        self.attn_dropout = nn.Dropout(0.0)

    def _split_heads(self, t):
        b, s, _ = t.shape
        return t.view(b, s, self.num_heads, self.head_dim).transpose(1, 2)

    def _attn(self, query, key, value, attention_mask):
        attn_weights = torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(value.size(-1))
        attn_weights += attention_mask
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn_weights = self.attn_dropout(attn_weights)
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states, attention_mask):
        query, key, value = self.c_attn(hidden_states).split(self.num_heads * self.head_dim, dim=2)
        query, key, value = map(self._split_heads, (query, key, value))
        attn_output = self._attn(query, key, value, attention_mask)
        b, h, s, d = attn_output.shape
        attn_output = attn_output.transpose(1, 2).reshape(b, s, h * d)
        return self.c_proj(attn_output)


def build_mask(padding, dtype):
    bsz, seq = padding.shape
    causal = torch.full((seq, seq), torch.finfo(dtype).min).triu(1)
    mask = causal[None, None].expand(bsz, 1, seq, seq).clone()
    mask.masked_fill_(~padding[:, None, None, :].bool(), torch.finfo(dtype).min)
    return mask


torch.manual_seed(0)
wte = nn.Embedding(11, 8)
layers = nn.ModuleList([GPTAttention(8, 2) for _ in range(2)])
ln_f = nn.LayerNorm(8)

input_ids = torch.tensor([[1, 4, 2, 7], [3, 3, 9, 0]])
padding = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]])
mask = build_mask(padding, torch.float32)
hidden = wte(input_ids)
for layer in layers:
    hidden = hidden + layer(hidden, mask)
logits = ln_f(hidden) @ wte.weight.t()
loss = F.cross_entropy(logits[:, :-1].reshape(-1, 11), input_ids[:, 1:].reshape(-1))
loss.backward()
