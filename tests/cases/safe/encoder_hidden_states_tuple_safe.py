# label: safe
# why: the residual update is `hidden = hidden + ...` (a new tensor), so the hidden states collected in the tuple keep their per-layer values; `all_hidden += (h,)` is tuple concatenation
import torch
import torch.nn as nn

torch.manual_seed(0)


class EncoderLayer(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, 2, batch_first=True)
        self.ln2 = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, 32), nn.GELU(), nn.Linear(32, dim))

    def forward(self, hidden):
        h = self.ln1(hidden)
        attn_out, _ = self.attn(h, h, h, need_weights=False)
        hidden = hidden + attn_out
        hidden = hidden + self.ffn(self.ln2(hidden))
        return hidden


layers = nn.ModuleList(EncoderLayer() for _ in range(3))
hidden = torch.randn(2, 4, 16)
all_hidden = ()
for layer in layers:
    all_hidden += (hidden,)
    hidden = layer(hidden)
all_hidden += (hidden,)

# layer-wise feature loss over every collected state
pooled = torch.stack([h.mean(1) for h in all_hidden])
loss = pooled.pow(2).mean() + hidden.abs().mean()
loss.backward()
grad_ffn = layers[0].ffn[0].weight.grad.clone()
grad_attn = layers[2].attn.in_proj_weight.grad.clone()
