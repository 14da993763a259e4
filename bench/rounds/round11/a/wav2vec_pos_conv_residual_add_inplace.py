# label: hazard raises
# why: the positional convolution saves its input, a transposed view of x, for backward; `x += x_conv` then overwrites x through that shared storage.
# source: https://github.com/NVIDIA-NeMo/Speech/pull/4383
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SamePad(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.remove = 1 if kernel_size % 2 == 0 else 0

    def forward(self, x):
        if self.remove > 0:
            x = x[:, :, : -self.remove]
        return x


class TransformerEncoder(nn.Module):
    def __init__(self, embedding_dim=8, conv_pos=4, conv_pos_groups=2, dropout=0.1, layer_norm_first=False):
        super().__init__()
        self.dropout = dropout
        self.embedding_dim = embedding_dim
        self.pos_conv = nn.Conv1d(embedding_dim, embedding_dim, kernel_size=conv_pos,
                                  padding=conv_pos // 2, groups=conv_pos_groups)
        self.pos_conv = nn.Sequential(self.pos_conv, SamePad(conv_pos), nn.GELU())
        self.layers = nn.ModuleList([nn.TransformerEncoderLayer(embedding_dim, 2, 16, dropout=0.0) for _ in range(2)])
        self.layer_norm_first = layer_norm_first
        self.layer_norm = nn.LayerNorm(embedding_dim)

    def forward(self, x, padding_mask=None):
        x = self.extract_features(x, padding_mask)
        if self.layer_norm_first:
            x = self.layer_norm(x)
        return x

    def extract_features(self, x, padding_mask=None):
        if padding_mask is not None:
            x[padding_mask] = 0

        x_conv = self.pos_conv(x.transpose(1, 2))
        x_conv = x_conv.transpose(1, 2)
        x += x_conv  # <-- IPL001: x's transposed view was saved by pos_conv for backward

        if not self.layer_norm_first:
            x = self.layer_norm(x)
        x = F.dropout(x, p=self.dropout, training=self.training)

        # B x T x C -> T x B x C
        x = x.transpose(0, 1)
        for layer in self.layers:
            x = layer(x)
        # T x B x C -> B x T x C
        return x.transpose(0, 1)


feature_projection = nn.Linear(6, 8)
encoder = TransformerEncoder()
features = torch.randn(2, 10, 6)
padding_mask = torch.zeros(2, 10, dtype=torch.bool)
padding_mask[1, 7:] = True
x = F.dropout(feature_projection(features), p=0.1, training=True)
out = encoder(x, padding_mask)
loss = out.pow(2).mean()
loss.backward()
