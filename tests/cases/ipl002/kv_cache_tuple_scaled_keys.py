# label: hazard silent
# why: the step's key tensor is stored in the `past_key_values` tuple and then pre-scaled in place, so every later decoding step reads already-scaled keys from the cache.
import torch
import torch.nn as nn
import torch.nn.functional as F


class DecoderAttention(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.o_proj = nn.Linear(dim, dim)
        self.scaling = dim ** -0.5

    def forward(self, hidden, past_key_value=None):
        q = self.q_proj(hidden)
        k = self.k_proj(hidden)
        v = self.v_proj(hidden)
        if past_key_value is not None:
            k = torch.cat([past_key_value[0], k], dim=1)
            v = torch.cat([past_key_value[1], v], dim=1)
        present = (k, v)
        k.mul_(self.scaling)  # <-- IPL002: `present[0]` (the cache) is read at the next step
        probs = F.softmax(q @ k.transpose(1, 2), dim=-1)
        return self.o_proj(probs @ v), present


torch.manual_seed(0)
attn = DecoderAttention()
embed = nn.Embedding(10, 8)
lm_head = nn.Linear(8, 10)
tokens = torch.tensor([[3]])
past = None
step_logits = []
with torch.no_grad():
    for _ in range(4):
        out, past = attn(embed(tokens[:, -1:]), past)
        logits = lm_head(out[:, -1])
        step_logits.append(logits)
        tokens = torch.cat([tokens, logits.argmax(-1, keepdim=True)], dim=1)
all_logits = torch.stack(step_logits)
