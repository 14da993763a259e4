# label: safe
# why: the fix turns the cache off while gradient checkpointing is active (use_cache=False), so the checkpointed decoder layers no longer write into a shared DynamicCache and recomputation reproduces the forward exactly.
# source: https://github.com/huggingface/transformers/issues/28056 (workaround/fix: use_cache=False with gradient checkpointing, cf. PR #30320)
from functools import partial
from typing import List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class DynamicCache:
    def __init__(self):
        self.key_cache: List[torch.Tensor] = []
        self.value_cache: List[torch.Tensor] = []

    def update(self, key_states, value_states, layer_idx):
        if len(self.key_cache) <= layer_idx:
            self.key_cache.append(key_states)
            self.value_cache.append(value_states)
        else:
            self.key_cache[layer_idx] = torch.cat([self.key_cache[layer_idx], key_states], dim=-2)
            self.value_cache[layer_idx] = torch.cat([self.value_cache[layer_idx], value_states], dim=-2)
        return self.key_cache[layer_idx], self.value_cache[layer_idx]


class LlamaAttention(nn.Module):
    def __init__(self, hidden_size, num_heads, layer_idx):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.layer_idx = layer_idx
        self.q_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.k_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.v_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.o_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, hidden_states, past_key_value: Optional[DynamicCache] = None):
        bsz, q_len, _ = hidden_states.size()
        q = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        if past_key_value is not None:
            k, v = past_key_value.update(k, v, self.layer_idx)
        attn_weights = torch.matmul(q, k.transpose(2, 3)) / self.head_dim ** 0.5
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn_output = torch.matmul(attn_weights, v)
        attn_output = attn_output.transpose(1, 2).reshape(bsz, q_len, -1)
        return self.o_proj(attn_output)


class LlamaDecoderLayer(nn.Module):
    def __init__(self, hidden_size, num_heads, layer_idx):
        super().__init__()
        self.self_attn = LlamaAttention(hidden_size, num_heads, layer_idx)
        self.mlp = nn.Sequential(nn.Linear(hidden_size, 4 * hidden_size), nn.SiLU(), nn.Linear(4 * hidden_size, hidden_size))
        self.input_layernorm = nn.LayerNorm(hidden_size)
        self.post_attention_layernorm = nn.LayerNorm(hidden_size)

    def forward(self, hidden_states, past_key_value=None):
        residual = hidden_states
        hidden_states = self.self_attn(self.input_layernorm(hidden_states), past_key_value=past_key_value)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = residual + self.mlp(self.post_attention_layernorm(hidden_states))
        return hidden_states


class LlamaModel(nn.Module):
    def __init__(self, vocab_size=50, hidden_size=32, num_heads=4, num_layers=2):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden_size)
        self.layers = nn.ModuleList([LlamaDecoderLayer(hidden_size, num_heads, i) for i in range(num_layers)])
        self.norm = nn.LayerNorm(hidden_size)
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False)
        self.gradient_checkpointing = True
        self._gradient_checkpointing_func = partial(checkpoint, use_reentrant=False)

    def forward(self, input_ids, use_cache=True):
        past_key_values = DynamicCache() if use_cache else None
        hidden_states = self.embed_tokens(input_ids)
        for decoder_layer in self.layers:
            if self.gradient_checkpointing and self.training:
                hidden_states = self._gradient_checkpointing_func(decoder_layer.__call__, hidden_states, past_key_values)
            else:
                hidden_states = decoder_layer(hidden_states, past_key_value=past_key_values)
        return self.lm_head(self.norm(hidden_states)), past_key_values


def main():
    model = LlamaModel()
    model.train()
    input_ids = torch.randint(0, 50, (2, 7))
    logits, _ = model(input_ids, use_cache=False)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, 50), input_ids[:, 1:].reshape(-1))
    loss.backward()
    return loss.detach(), model.layers[0].self_attn.q_proj.weight.grad


loss, q_grad = main()
