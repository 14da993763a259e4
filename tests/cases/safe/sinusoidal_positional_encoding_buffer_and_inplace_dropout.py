# label: safe
# why: the sinusoidal table is filled in place right after torch.zeros in __init__, and the in-place dropout acts on the fresh sum x + pe, which add does not save.
import math

import torch
import torch.nn as nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=64):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout, inplace=True)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):
        # x: (seq_len, batch, d_model)
        x = x + self.pe[:x.size(0)]
        return self.dropout(x)


class TinyTransformerEncoder(nn.Module):
    def __init__(self, vocab=12, d_model=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = PositionalEncoding(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, 16), nn.ReLU(inplace=True), nn.Linear(16, vocab))
        self.d_model = d_model

    def forward(self, src):
        x = self.embed(src) * math.sqrt(self.d_model)
        return self.ff(self.pos(x))


torch.manual_seed(0)
model = TinyTransformerEncoder()
model.train()
src = torch.tensor([[1, 5], [3, 7], [2, 2], [9, 0]])
out = model(src)
loss = nn.functional.cross_entropy(out.view(-1, 12), src.view(-1))
loss.backward()
