# label: hazard raises
# why: layer 0 writes its value projection into the shared v_first buffer with copy_, so when gradient checkpointing recomputes layer 0 during backward it rewrites v_first, which the later layers' lerp saved for backward.
# source: https://github.com/fla-org/flash-linear-attention/commit/1bc96a6418fe000acdf6e2b0bab5ac601b3e98b4
from functools import partial

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class RWKV7Attention(nn.Module):
    def __init__(self, hidden_size, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.r_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.v_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.v_lora = nn.Linear(hidden_size, hidden_size)
        self.o_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, hidden_states, attention_mask=None, v_first=None):
        r = self.r_proj(hidden_states)
        v = self.v_proj(hidden_states)
        if self.layer_idx == 0:
            v_first.copy_(v)  # <-- IPL004
        else:
            v = torch.lerp(v, v_first, self.v_lora(hidden_states).sigmoid())
        o = torch.sigmoid(r) * v
        return self.o_proj(o)


class RWKV7Block(nn.Module):
    def __init__(self, hidden_size, layer_idx):
        super().__init__()
        self.attn_norm = nn.LayerNorm(hidden_size)
        self.attn = RWKV7Attention(hidden_size, layer_idx)

    def forward(self, hidden_states, attention_mask=None, v_first=None):
        residual = hidden_states
        hidden_states = self.attn(self.attn_norm(hidden_states), attention_mask, v_first=v_first)
        return residual + hidden_states


class RWKV7Model(nn.Module):
    def __init__(self, vocab_size=32, hidden_size=16, num_hidden_layers=3):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, hidden_size)
        self.layers = nn.ModuleList([RWKV7Block(hidden_size, i) for i in range(num_hidden_layers)])
        self.norm = nn.LayerNorm(hidden_size)
        self.gradient_checkpointing = True
        self._gradient_checkpointing_func = partial(checkpoint, use_reentrant=False)

    def forward(self, input_ids, attention_mask=None):
        hidden_states = self.embeddings(input_ids)
        v_first = torch.empty_like(hidden_states)
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                hidden_states = self._gradient_checkpointing_func(
                    layer.__call__, hidden_states, attention_mask, v_first)
            else:
                hidden_states = layer(hidden_states, attention_mask, v_first=v_first)
        return self.norm(hidden_states)


def main():
    model = RWKV7Model()
    model.train()
    input_ids = torch.randint(0, 32, (2, 6))
    out = model(input_ids)
    loss = out.pow(2).mean()
    loss.backward()
    return out.detach(), model.layers[0].attn.v_proj.weight.grad.clone()


out, grad = main()
