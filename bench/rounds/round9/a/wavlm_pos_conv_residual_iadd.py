# label: hazard raises
# why: `x += x_conv` writes into x while the positional conv still holds x.transpose(1, 2) (a view of x) as its saved input, so fine-tuning backward fails
# source: https://github.com/microsoft/unilm/issues/806 (fixed in https://github.com/microsoft/unilm/pull/1060)
import math
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
        std = math.sqrt(4.0 / (conv_pos * self.embedding_dim))
        nn.init.normal_(self.pos_conv.weight, mean=0, std=std)
        nn.init.constant_(self.pos_conv.bias, 0)
        self.pos_conv = nn.utils.weight_norm(self.pos_conv, name="weight", dim=2)
        self.pos_conv = nn.Sequential(self.pos_conv, SamePad(conv_pos), nn.GELU())
        self.layer_norm = nn.LayerNorm(self.embedding_dim)
        self.layers = nn.ModuleList([nn.Linear(embedding_dim, embedding_dim) for _ in range(2)])

    def extract_features(self, x, padding_mask=None):
        if padding_mask is not None:
            x[padding_mask] = 0

        x_conv = self.pos_conv(x.transpose(1, 2))
        x_conv = x_conv.transpose(1, 2)
        x += x_conv  # <-- IPL001: x is the storage of the conv's saved input x.transpose(1, 2)

        x = self.layer_norm(x)
        x = F.dropout(x, p=self.dropout, training=self.training)
        layer_results = []
        for layer in self.layers:
            x = x + F.gelu(layer(x))
            layer_results.append(x)
        return x, layer_results


class WavLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.feature_extractor = nn.Conv1d(1, 8, kernel_size=10, stride=5)
        self.post_extract_proj = nn.Linear(8, 8)
        self.encoder = TransformerEncoder()

    def extract_features(self, source):
        features = self.feature_extractor(source.unsqueeze(1)).transpose(1, 2)
        features = self.post_extract_proj(features)
        x, layer_results = self.encoder.extract_features(features)
        return x, layer_results


model = WavLM()
model.train()
wav_input_16khz = torch.randn(2, 200)
y_hat, _ = model.extract_features(wav_input_16khz)
loss = F.cross_entropy(y_hat.reshape(-1, 8), torch.ones(y_hat.reshape(-1, 8).size(0), dtype=torch.long))
loss.backward()
