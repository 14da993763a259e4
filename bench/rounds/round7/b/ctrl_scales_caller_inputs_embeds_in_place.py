# label: hazard silent
# why: CTRLModel.forward scales inputs_embeds in place, so when the caller passes its own inputs_embeds the caller's tensor is multiplied by sqrt(d_model) and a second forward with the same tensor returns a different result.
# source: https://github.com/huggingface/transformers/issues/47741
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


def angle_defn(pos, i, d_model_size):
    angle_rates = 1 / torch.pow(10000, (2 * (i // 2)) / d_model_size)
    return pos * angle_rates


def positional_encoding(position, d_model_size, dtype):
    angle_rads = angle_defn(
        torch.arange(position, dtype=torch.int64).to(dtype).unsqueeze(1),
        torch.arange(d_model_size, dtype=torch.int64).to(dtype).unsqueeze(0),
        d_model_size,
    )
    sines = torch.sin(angle_rads[:, 0::2])
    cosines = torch.cos(angle_rads[:, 1::2])
    return torch.cat([sines, cosines], dim=-1)


class EncoderLayer(nn.Module):
    def __init__(self, d_model_size, num_heads, dff):
        super().__init__()
        self.multi_head_attention = nn.MultiheadAttention(d_model_size, num_heads, batch_first=True)
        self.ffn = nn.Sequential(nn.Linear(d_model_size, dff), nn.ReLU(), nn.Linear(dff, d_model_size))
        self.layernorm1 = nn.LayerNorm(d_model_size, eps=1e-6)
        self.layernorm2 = nn.LayerNorm(d_model_size, eps=1e-6)

    def forward(self, x, mask):
        normed = self.layernorm1(x)
        attn_output, _ = self.multi_head_attention(normed, normed, normed, attn_mask=mask)
        out1 = x + attn_output
        out2 = self.layernorm2(out1)
        return out1 + self.ffn(out2)


class CTRLModel(nn.Module):
    def __init__(self, vocab_size=20, n_positions=16, n_embd=8, n_layer=2, n_head=2, dff=16):
        super().__init__()
        self.d_model_size = n_embd
        self.num_layers = n_layer
        self.register_buffer("pos_encoding", positional_encoding(n_positions, self.d_model_size, torch.float),
                             persistent=False)
        self.w = nn.Embedding(vocab_size, n_embd)
        self.h = nn.ModuleList([EncoderLayer(n_embd, n_head, dff) for _ in range(n_layer)])
        self.layernorm = nn.LayerNorm(n_embd, eps=1e-6)

    def forward(self, input_ids=None, inputs_embeds=None):
        if input_ids is not None:
            input_shape = input_ids.size()
        else:
            input_shape = inputs_embeds.size()[:-1]
        position_ids = torch.arange(0, input_shape[-1], dtype=torch.long).unsqueeze(0)
        if inputs_embeds is None:
            inputs_embeds = self.w(input_ids)
        seq_len = input_shape[-1]
        mask = torch.triu(torch.ones(seq_len, seq_len), 1).bool()

        inputs_embeds *= np.sqrt(self.d_model_size)  # <-- IPL004: scales the caller's inputs_embeds in place

        pos_embeds = self.pos_encoding[position_ids, :]
        hidden_states = inputs_embeds + pos_embeds
        for h in self.h:
            hidden_states = h(hidden_states, mask)
        return self.layernorm(hidden_states)


model = CTRLModel().eval()
inputs_embeds = torch.randn(1, 5, 8)
with torch.no_grad():
    first = model(inputs_embeds=inputs_embeds)
    second = model(inputs_embeds=inputs_embeds)
drift = (first - second).abs().max()
