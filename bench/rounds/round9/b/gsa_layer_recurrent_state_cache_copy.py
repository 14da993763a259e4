# label: hazard raises
# why: the layer's cache stores the recurrent state and later decoding steps copy_ the new final state into that stored tensor, which the previous chunk step saved as its initial_state for backward.
# source: https://github.com/fla-org/flash-linear-attention/issues/73
import torch
from torch import nn

torch.manual_seed(0)


class Cache:
    def __init__(self):
        self.states = []

    def __getitem__(self, layer_idx):
        return self.states[layer_idx] if layer_idx < len(self.states) else None

    def update(self, recurrent_state, layer_idx):
        if len(self.states) <= layer_idx:
            self.states.append({"recurrent_state": recurrent_state})
        else:
            self.states[layer_idx]["recurrent_state"].copy_(recurrent_state)  # <-- IPL001: stored state was saved as initial_state by the previous chunk


def chunk_gated_recurrence(q, k, v, g, initial_state=None, output_final_state=False):
    B, T, D = q.shape
    state = initial_state if initial_state is not None else q.new_zeros(B, D, D)
    outputs = []
    for t in range(T):
        state = g[:, t, :, None] * state + k[:, t, :, None] * v[:, t, None, :]
        outputs.append(torch.einsum("bd,bde->be", q[:, t], state))
    return torch.stack(outputs, 1), (state if output_final_state else None)


class GatedSlotAttention(nn.Module):
    def __init__(self, hidden, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.q_proj = nn.Linear(hidden, hidden)
        self.k_proj = nn.Linear(hidden, hidden)
        self.v_proj = nn.Linear(hidden, hidden)
        self.g_proj = nn.Linear(hidden, hidden)
        self.o_proj = nn.Linear(hidden, hidden)

    def forward(self, hidden_states, past_key_values=None, use_cache=False):
        q = self.q_proj(hidden_states)
        k = self.k_proj(hidden_states).sigmoid()
        v = self.v_proj(hidden_states)
        g = self.g_proj(hidden_states).sigmoid()
        last_state = past_key_values[self.layer_idx] if past_key_values is not None else None
        recurrent_state = last_state["recurrent_state"] if last_state is not None else None
        o, recurrent_state = chunk_gated_recurrence(q, k, v, g, initial_state=recurrent_state, output_final_state=use_cache)
        if past_key_values is not None:
            past_key_values.update(recurrent_state=recurrent_state, layer_idx=self.layer_idx)
        return self.o_proj(o)


layer = GatedSlotAttention(hidden=4, layer_idx=0)
cache = Cache()
chunks = torch.randn(3, 2, 2, 4).unbind(0)
outs = [layer(x, past_key_values=cache, use_cache=True) for x in chunks]
loss = torch.cat(outs, 1).pow(2).mean()
loss.backward()
