# label: safe
# why: the fixed Cache.update rebinds the list slot to the new state tensor instead of copying into the old one, so the previous state that the second segment saved for backward is left intact.
# source: https://github.com/fla-org/flash-linear-attention/commit/39172ad1e9d9a58dbe9b51e88943b475ec907a5a
from typing import Any, Dict, List, Optional, Tuple

import torch
import torch.nn as nn

torch.manual_seed(0)


class Cache:
    """A cache used for storing hidden states produced by flash linear attention models."""

    def __init__(self, seen_tokens: int = 0):
        self.states: List[List[torch.Tensor]] = []
        self._seen_tokens = seen_tokens

    def __getitem__(self, layer_idx: int):
        if layer_idx < len(self):
            return self.states[layer_idx]
        raise KeyError(f"Cache only has {len(self)} layers, attempted to access layer with index {layer_idx}")

    def __len__(self):
        return len(self.states)

    def update(self, state, layer_idx: int, offset: Optional[int] = 1,
               cache_kwargs: Optional[Dict[str, Any]] = None):
        if isinstance(state, torch.Tensor):
            state = [state, ]
        if len(self.states) <= layer_idx:
            self.states.append(list(state))
        else:
            for i, s in enumerate(state):
                self.states[layer_idx][i] = s
            # update the number of seen tokens once we achieve the last layer
            if layer_idx == len(self) - 1:
                self._seen_tokens += offset
        return state


def fused_recurrent_linear_attn(q, k, v, g, initial_state=None):
    """Gated linear attention recurrence, one step at a time (reference for the fused kernel)."""
    b, t, d = q.shape
    state = q.new_zeros(b, d, d) if initial_state is None else initial_state
    outs = []
    for i in range(t):
        state = state * g[:, i, :, None] + k[:, i, :, None] * v[:, i, None, :]
        outs.append(torch.einsum('bd,bdm->bm', q[:, i], state))
    return torch.stack(outs, dim=1), state


class GatedLinearAttention(nn.Module):
    def __init__(self, hidden_size=4, layer_idx=0):
        super().__init__()
        self.layer_idx = layer_idx
        self.q_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.k_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.v_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.gk_proj = nn.Linear(hidden_size, hidden_size)
        self.o_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, hidden_states, past_key_values=None, use_cache=True):
        last_state = None
        if past_key_values is not None and len(past_key_values) > self.layer_idx:
            last_state = past_key_values[self.layer_idx]
        q = self.q_proj(hidden_states)
        k = self.k_proj(hidden_states)
        v = self.v_proj(hidden_states)
        g = torch.sigmoid(self.gk_proj(hidden_states))
        recurrent_state = last_state[0] if last_state is not None else None
        o, recurrent_state = fused_recurrent_linear_attn(q, k, v, g, initial_state=recurrent_state)
        if past_key_values is not None:
            past_key_values.update(recurrent_state, self.layer_idx, offset=q.shape[1])
        return self.o_proj(o), past_key_values


def main():
    layer = GatedLinearAttention()
    x = torch.randn(2, 6, 4)
    past_key_values = Cache()
    # process a long sequence in two segments, backpropagating through both
    out1, past_key_values = layer(x[:, :3], past_key_values=past_key_values)
    out2, past_key_values = layer(x[:, 3:], past_key_values=past_key_values)
    loss = torch.cat([out1, out2], dim=1).pow(2).mean()
    loss.backward()
    return layer.q_proj.weight.grad


q_proj_grad = main()
