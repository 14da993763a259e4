# label: hazard raises
# why: the convolutional positional embedding is added back with x += x_conv, but pos_conv saved a transposed view of x as its input, so the speech encoder cannot be fine-tuned.
# source: https://github.com/jasonppy/word-discovery/pull/4
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


class ConvFeatureExtractionModel(nn.Module):
    def __init__(self, conv_layers):
        super().__init__()
        in_d = 1
        self.conv_layers = nn.ModuleList()
        for i, (dim, k, stride) in enumerate(conv_layers):
            block = [nn.Conv1d(in_d, dim, k, stride=stride, bias=False), nn.Dropout(p=0.0)]
            if i == 0:
                block.append(nn.GroupNorm(dim, dim, affine=True))
            block.append(nn.GELU())
            self.conv_layers.append(nn.Sequential(*block))
            in_d = dim

    def forward(self, x):
        if len(x.shape) == 2:
            x = x.unsqueeze(1)
        for conv in self.conv_layers:
            x = conv(x)
        return x


class AudioEncoder(nn.Module):
    def __init__(self, embed=6, encoder_embed_dim=8, conv_pos=4, conv_pos_groups=2):
        super().__init__()
        self.feature_extractor = ConvFeatureExtractionModel([(embed, 5, 3), (embed, 3, 2)])
        self.layer_norm = nn.LayerNorm(embed)
        self.post_extract_proj = nn.Linear(embed, encoder_embed_dim)
        self.dropout_input = nn.Dropout(0.1)
        self.dropout_features = nn.Dropout(0.1)
        pos_conv = nn.Conv1d(encoder_embed_dim, encoder_embed_dim, kernel_size=conv_pos,
                             padding=conv_pos // 2, groups=conv_pos_groups)
        std = math.sqrt(4 / (conv_pos * encoder_embed_dim))
        nn.init.normal_(pos_conv.weight, mean=0, std=std)
        nn.init.constant_(pos_conv.bias, 0)
        pos_conv = nn.utils.weight_norm(pos_conv, name="weight", dim=2)
        self.pos_conv = nn.Sequential(pos_conv, SamePad(conv_pos), nn.GELU())
        layer = nn.TransformerEncoderLayer(encoder_embed_dim, 2, 16, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=1)

    def forward(self, source, padding_mask=None):
        features = self.feature_extractor(source)
        features_pen = features.float().pow(2).mean()
        features = features.transpose(1, 2)
        features = self.layer_norm(features)
        unmasked_features = features.clone()
        features = self.post_extract_proj(features)
        features = self.dropout_input(features)
        unmasked_features = self.dropout_features(unmasked_features)

        x = features
        x_conv = self.pos_conv(x.transpose(1, 2))
        x_conv = x_conv.transpose(1, 2)
        x += x_conv  # <-- IPL001: pos_conv saved x.transpose(1, 2) for its weight gradient
        layer_feats = self.encoder(x, src_key_padding_mask=padding_mask)
        return {"features": layer_feats, "features_pen": features_pen, "padding_mask": padding_mask}


audio_encoder = AudioEncoder()
audio_encoder.train()
wav = torch.randn(2, 64)
out = audio_encoder(wav)
visual_feats = torch.randn(2, 8)
audio_feats = out["features"].mean(1)
sim = audio_feats @ visual_feats.t()
loss = F.cross_entropy(sim, torch.arange(2)) + 0.1 * out["features_pen"]
loss.backward()
