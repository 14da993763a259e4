# label: hazard raises
# why: StaticLayer.update writes each step's keys/values into the preallocated cache with index_copy_, but the previous decode step's attention saved that same cache tensor, so backpropagating through two decode steps fails
# source: https://github.com/huggingface/transformers/pull/43041 (issue #43010)
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class StaticLayer:
    """A static cache layer that stores keys/values as tensors of shape [batch, heads, max_cache_len, head_dim] and mutates them in place."""

    is_compileable = True

    def __init__(self, max_cache_len: int):
        self.max_cache_len = max_cache_len
        self.is_initialized = False

    def lazy_initialization(self, key_states: torch.Tensor):
        b, h, _, d = key_states.shape
        self.keys = torch.zeros(b, h, self.max_cache_len, d, dtype=key_states.dtype)
        self.values = torch.zeros(b, h, self.max_cache_len, d, dtype=key_states.dtype)
        self.is_initialized = True

    def update(self, key_states, value_states, cache_kwargs=None):
        if not self.is_initialized:
            self.lazy_initialization(key_states)
        cache_position = cache_kwargs.get("cache_position")
        self.keys.index_copy_(2, cache_position, key_states)  # <-- IPL001: the cache was saved by the previous step's attention
        self.values.index_copy_(2, cache_position, value_states)  # <-- IPL001: the cache was saved by the previous step's attention
        return self.keys, self.values


class StaticCache:
    def __init__(self, num_layers, max_cache_len):
        self.layers = [StaticLayer(max_cache_len) for _ in range(num_layers)]

    def update(self, key_states, value_states, layer_idx, cache_kwargs=None):
        return self.layers[layer_idx].update(key_states, value_states, cache_kwargs)


class Attention(nn.Module):
    def __init__(self, hidden, heads, layer_idx):
        super().__init__()
        self.heads, self.head_dim, self.layer_idx = heads, hidden // heads, layer_idx
        self.q_proj = nn.Linear(hidden, hidden)
        self.k_proj = nn.Linear(hidden, hidden)
        self.v_proj = nn.Linear(hidden, hidden)
        self.o_proj = nn.Linear(hidden, hidden)

    def forward(self, hidden_states, past_key_values, cache_position):
        b, t, _ = hidden_states.shape
        shape = (b, t, self.heads, self.head_dim)
        q = self.q_proj(hidden_states).view(shape).transpose(1, 2)
        k = self.k_proj(hidden_states).view(shape).transpose(1, 2)
        v = self.v_proj(hidden_states).view(shape).transpose(1, 2)
        k, v = past_key_values.update(k, v, self.layer_idx, {"cache_position": cache_position})
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        valid = torch.arange(k.shape[2]) <= cache_position[-1]
        scores = scores.masked_fill(~valid, float("-inf"))
        out = scores.softmax(-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(b, t, -1))


class TinyLM(nn.Module):
    def __init__(self, vocab=16, hidden=8, heads=2, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList([Attention(hidden, heads, i) for i in range(layers)])
        self.lm_head = nn.Linear(hidden, vocab)

    def forward(self, input_ids, past_key_values, cache_position):
        h = self.embed(input_ids)
        for layer in self.layers:
            h = h + layer(h, past_key_values, cache_position)
        return self.lm_head(h)


model = TinyLM()
prompt = torch.tensor([[3, 7, 1]])
past_key_values = StaticCache(num_layers=2, max_cache_len=6)

# prefill, then two decode steps; the sequence log-likelihood is optimised (e.g. policy-gradient fine-tuning)
logits = model(prompt, past_key_values, torch.arange(3))
log_probs = [logits[:, -1].log_softmax(-1)[:, 5]]
next_token = torch.tensor([[5]])
for step in range(2):
    pos = torch.tensor([3 + step])
    logits = model(next_token, past_key_values, pos)
    log_probs.append(logits[:, -1].log_softmax(-1)[:, 2])
    next_token = torch.tensor([[2]])
reward = 1.5
loss = -reward * torch.stack(log_probs).sum()
loss.backward()
