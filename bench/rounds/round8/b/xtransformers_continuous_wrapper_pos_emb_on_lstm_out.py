# label: hazard raises
# why: with project_in = Identity, x is the caller's LSTM output (saved by the LSTM backward), and the wrapper adds the positional embedding into it with +=
# source: https://github.com/lucidrains/x-transformers/pull/55 (commit 67da12a3a8b15af08bd56be33ab9bcc1d221b01f)
import torch
from torch import nn

torch.manual_seed(0)


def exists(val):
    return val is not None


class AbsolutePositionalEmbedding(nn.Module):
    def __init__(self, dim, max_seq_len):
        super().__init__()
        self.emb = nn.Embedding(max_seq_len, dim)

    def forward(self, x):
        n = torch.arange(x.shape[1], device=x.device)
        return self.emb(n)[None, :, :]


class Encoder(nn.Module):
    def __init__(self, dim, depth, heads):
        super().__init__()
        self.layers = nn.ModuleList([
            nn.TransformerEncoderLayer(d_model=dim, nhead=heads, dim_feedforward=dim * 2, dropout=0.0, batch_first=True)
            for _ in range(depth)
        ])
        self.dim = dim

    def forward(self, x, mask=None, return_hiddens=False):
        hiddens = []
        for layer in self.layers:
            x = layer(x, src_key_padding_mask=None if mask is None else ~mask)
            hiddens.append(x)
        if return_hiddens:
            return x, hiddens
        return x


class ContinuousTransformerWrapper(nn.Module):
    def __init__(self, *, max_seq_len, attn_layers, dim_in=None, dim_out=None, emb_dropout=0.):
        super().__init__()
        dim = attn_layers.dim
        self.max_seq_len = max_seq_len
        self.pos_emb = AbsolutePositionalEmbedding(dim, max_seq_len)
        self.emb_dropout = nn.Dropout(emb_dropout)
        self.project_in = nn.Linear(dim_in, dim) if exists(dim_in) else nn.Identity()
        self.attn_layers = attn_layers
        self.norm = nn.LayerNorm(dim)
        self.project_out = nn.Linear(dim, dim_out) if exists(dim_out) else nn.Identity()

    def forward(self, x, return_embeddings=False, mask=None, **kwargs):
        b, n, _ = x.shape
        x = self.project_in(x)
        x += self.pos_emb(x)  # <-- IPL001, IPL004: x is the caller's LSTM output (Identity projection), saved by the LSTM backward
        x = self.emb_dropout(x)
        x, intermediates = self.attn_layers(x, mask=mask, return_hiddens=True, **kwargs)
        x = self.norm(x)
        return self.project_out(x) if not return_embeddings else x


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(input_size=16, hidden_size=16, num_layers=1, bidirectional=False, batch_first=True)
        self.transformer = ContinuousTransformerWrapper(
            max_seq_len=20,
            attn_layers=Encoder(dim=16, depth=1, heads=4),
        )

    def forward(self, x):
        x, _ = self.rnn(x)
        x = self.transformer(x)
        return x


m = Model()
x = torch.randn((3, 6, 16))
loss = m(x).sum()
loss.backward()
