# label: hazard raises
# why: `x += x_conv` adds the positional convolution back into x, but the conv saved x.transpose(1, 2) (a view of x) for its weight gradient.
# source: https://github.com/dobby-seo/Wav2Keyword/pull/9
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


class ConvFeatureExtractionModel(nn.Module):
    def __init__(self, conv_layers):
        super().__init__()
        self.conv_layers = nn.ModuleList()
        in_d = 1
        for dim, k, stride in conv_layers:
            self.conv_layers.append(nn.Sequential(nn.Conv1d(in_d, dim, k, stride=stride, bias=False), nn.GELU()))
            in_d = dim

    def forward(self, x):
        x = x.unsqueeze(1)
        for conv in self.conv_layers:
            x = conv(x)
        return x


class TransformerEncoder(nn.Module):
    def __init__(self, embed_dim=8, conv_pos=4, conv_pos_groups=2):
        super().__init__()
        self.dropout = 0.0
        self.pos_conv = nn.Conv1d(embed_dim, embed_dim, kernel_size=conv_pos, padding=conv_pos // 2, groups=conv_pos_groups)
        self.pos_conv = nn.Sequential(self.pos_conv, SamePad(conv_pos), nn.GELU())
        self.layers = nn.ModuleList([nn.TransformerEncoderLayer(embed_dim, 2, 16, dropout=0.0) for _ in range(2)])
        self.layer_norm = nn.LayerNorm(embed_dim)

    def forward(self, x, padding_mask=None):
        x = self.extract_features(x, padding_mask)
        return x

    def extract_features(self, x, padding_mask=None):
        if padding_mask is not None:
            x[padding_mask] = 0

        x_conv = self.pos_conv(x.transpose(1, 2))
        x_conv = x_conv.transpose(1, 2)
        x += x_conv  # <-- IPL001: x's transpose was saved by pos_conv

        x = self.layer_norm(x)
        x = F.dropout(x, p=self.dropout, training=self.training)

        # B x T x C -> T x B x C
        x = x.transpose(0, 1)
        for layer in self.layers:
            x = layer(x)
        x = x.transpose(0, 1)
        return x


class Wav2Vec2Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.feature_extractor = ConvFeatureExtractionModel([(6, 5, 2), (6, 3, 2)])
        self.layer_norm = nn.LayerNorm(6)
        self.post_extract_proj = nn.Linear(6, 8)
        self.encoder = TransformerEncoder()

    def extract_features(self, source, padding_mask=None):
        features = self.feature_extractor(source)
        features = features.transpose(1, 2)
        features = self.layer_norm(features)
        x = self.post_extract_proj(features)
        x = self.encoder(x, padding_mask=padding_mask)
        return x


class KWS(nn.Module):
    def __init__(self, n_class=4):
        super().__init__()
        self.w2v_encoder = Wav2Vec2Model()
        self.decoder = nn.Linear(8, n_class)

    def forward(self, wav, padding_mask=None):
        x = self.w2v_encoder.extract_features(wav, padding_mask)
        return self.decoder(x.mean(dim=1))


model = KWS()
wav = torch.randn(3, 64)
target = torch.tensor([0, 2, 3])
padding_mask = torch.zeros(3, 14, dtype=torch.bool)
padding_mask[1, 10:] = True
logits = model(wav, padding_mask)
loss = F.cross_entropy(logits, target)
loss.backward()
