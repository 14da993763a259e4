# label: safe
# why: after the fix layer 0 returns `v_first = v` instead of copying into a caller buffer, so under gradient checkpointing v_first is a checkpoint output that carries grad and later layers backpropagate into layer 0's value projection.
# source: https://github.com/fla-org/flash-linear-attention/commit/5cac5716c47d9771c4d7b91033e3e9af82140442
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class RWKV7Attention(nn.Module):
    def __init__(self, hidden_size=8, layer_idx=0):
        super().__init__()
        self.layer_idx = layer_idx
        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
        self.x_x = nn.Parameter(torch.rand(4, hidden_size) * 0.5)
        self.r_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.k_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.v_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.v_lora = nn.Sequential(nn.Linear(hidden_size, 4, bias=False), nn.Tanh(), nn.Linear(4, hidden_size))
        self.o_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, hidden_states, attention_mask=None, v_first=None):
        shifted = self.time_shift(hidden_states)
        delta = shifted - hidden_states
        xr, xk, xv, xa = (hidden_states + delta[None] * self.x_x[:, None, None, :]).unbind(0)

        r = self.r_proj(xr)
        k = self.k_proj(xk)
        v = self.v_proj(xv)

        if self.layer_idx == 0:
            v_first = v
        else:
            v = torch.lerp(v, v_first, self.v_lora(xv).sigmoid())

        # dealing with left-padding
        if attention_mask is not None:
            v = v * attention_mask[:, -v.shape[-2]:, None]

        o = torch.cumsum(k.sigmoid() * v, dim=1) * torch.sigmoid(r)
        return hidden_states + self.o_proj(o), v_first


class RWKV7Model(nn.Module):
    def __init__(self, vocab_size=20, hidden_size=8, num_layers=2):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, hidden_size)
        self.layers = nn.ModuleList([RWKV7Attention(hidden_size, layer_idx=i) for i in range(num_layers)])
        self.norm = nn.LayerNorm(hidden_size)
        self.gradient_checkpointing = True

    def forward(self, input_ids, attention_mask=None):
        hidden_states = self.embeddings(input_ids)
        v_first = None
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                hidden_states, v_first = checkpoint(layer.__call__, hidden_states, attention_mask, v_first, use_reentrant=True)
            else:
                hidden_states, v_first = layer(hidden_states, attention_mask=attention_mask, v_first=v_first)
        return self.norm(hidden_states)


def main():
    model = RWKV7Model()
    model.train()
    input_ids = torch.randint(0, 20, (2, 5))
    out = model(input_ids)
    out.pow(2).mean().backward()
    return model.layers[0].v_proj.weight.grad


v_proj_grad = main()
