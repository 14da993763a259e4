# label: safe
# why: fixed version adds the positional conv out of place; the remaining `x[padding_mask] = 0` writes a dropout/linear output before anything saves it
# source: https://github.com/microsoft/unilm/pull/999 (beats/backbone.py, TransformerEncoder.extract_features)
import math
import torch
from torch import nn
import torch.nn.functional as F
from torch.nn import LayerNorm

torch.manual_seed(0)


class SamePad(nn.Module):
    def __init__(self, kernel_size, causal=False):
        super().__init__()
        if causal:
            self.remove = kernel_size - 1
        else:
            self.remove = 1 if kernel_size % 2 == 0 else 0

    def forward(self, x):
        if self.remove > 0:
            x = x[:, :, : -self.remove]
        return x


class TransformerEncoder(nn.Module):
    def __init__(self, embedding_dim=8, conv_pos=4, conv_pos_groups=2, dropout=0.0):
        super().__init__()
        self.dropout = dropout
        self.embedding_dim = embedding_dim
        self.pos_conv = nn.Conv1d(
            self.embedding_dim,
            self.embedding_dim,
            kernel_size=conv_pos,
            padding=conv_pos // 2,
            groups=conv_pos_groups,
        )
        std = math.sqrt(4 / (conv_pos * self.embedding_dim))
        nn.init.normal_(self.pos_conv.weight, mean=0, std=std)
        nn.init.constant_(self.pos_conv.bias, 0)
        self.pos_conv = nn.Sequential(self.pos_conv, SamePad(conv_pos), nn.GELU())
        self.layers = nn.ModuleList(
            [nn.TransformerEncoderLayer(embedding_dim, 2, 16, dropout=0.0) for _ in range(2)]
        )
        self.layer_norm_first = False
        self.layer_norm = LayerNorm(self.embedding_dim)

    def forward(self, x, padding_mask=None):
        x = self.extract_features(x, padding_mask)
        return x

    def extract_features(self, x, padding_mask=None):
        if padding_mask is not None:
            x[padding_mask] = 0

        x_conv = self.pos_conv(x.transpose(1, 2))
        x_conv = x_conv.transpose(1, 2)
        x = x + x_conv

        if not self.layer_norm_first:
            x = self.layer_norm(x)

        x = F.dropout(x, p=self.dropout, training=self.training)

        # B x T x C -> T x B x C
        x = x.transpose(0, 1)
        for layer in self.layers:
            x = layer(x, src_key_padding_mask=padding_mask)
        x = x.transpose(0, 1)
        return x


post_extract_proj = nn.Linear(6, 8)
dropout_input = nn.Dropout(0.0)
encoder = TransformerEncoder()

features = torch.randn(2, 7, 6)
padding_mask = torch.zeros(2, 7, dtype=torch.bool)
padding_mask[1, 5:] = True


def beats_extract_features(features, padding_mask):
    x = dropout_input(post_extract_proj(features))
    return encoder(x, padding_mask=padding_mask)


out = beats_extract_features(features, padding_mask)
loss = out[~padding_mask].pow(2).mean()
loss.backward()
