# label: safe
# why: embedded += self.pe(embedded) adds into the embedding output, which neither the embedding lookup nor the positional-encoding branch saved for backward
# source: https://github.com/DSPsleeporg/smiles-transformer/pull/22
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout, max_len=50):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer('pe', pe)

    def forward(self, x):
        x = x + self.pe[:x.size(0), :]
        return self.dropout(x)


class TrfmSeq2seq(nn.Module):
    def __init__(self, in_size, hidden_size, out_size, n_layers, dropout=0.0):
        super().__init__()
        self.in_size = in_size
        self.hidden_size = hidden_size
        self.embed = nn.Embedding(in_size, hidden_size)
        self.pe = PositionalEncoding(hidden_size, dropout)
        self.trfm = nn.Transformer(d_model=hidden_size, nhead=2, num_encoder_layers=n_layers,
                                   num_decoder_layers=n_layers, dim_feedforward=hidden_size,
                                   dropout=dropout)
        self.out = nn.Linear(hidden_size, out_size)

    def forward(self, src):
        embedded = self.embed(src)  # (T,B,H)
        embedded += self.pe(embedded)
        hidden = self.trfm(embedded, embedded)
        out = self.out(hidden)
        return torch.log_softmax(out, dim=2)


model = TrfmSeq2seq(in_size=12, hidden_size=8, out_size=12, n_layers=1)
model.eval()
src = torch.randint(0, 12, (5, 2))
output = model(src)
loss = nn.functional.nll_loss(output.view(-1, 12), src.view(-1))
loss.backward()
