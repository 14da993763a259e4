# label: hazard raises
# why: each conv sublayer ends in a ReLU, which saves its output for backward, and transpose_(1, 2) on that output is an in-place (metadata) modification that bumps its version
# source: https://github.com/allenai/allennlp-models/commit/d1b81c3637f875f9be95314945deb48d40d32ae2
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def add_positional_features(tensor, min_timescale=1.0, max_timescale=1.0e4):
    _, timesteps, hidden_dim = tensor.size()
    timestep_range = torch.arange(timesteps, dtype=torch.float)
    num_timescales = hidden_dim // 2
    timescale_range = torch.arange(num_timescales, dtype=torch.float)
    log_timescale_increments = math.log(float(max_timescale) / float(min_timescale)) / float(num_timescales - 1)
    inverse_timescales = min_timescale * torch.exp(timescale_range * -log_timescale_increments)
    scaled_time = timestep_range.unsqueeze(1) * inverse_timescales.unsqueeze(0)
    sinusoids = torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], 1)
    return tensor + sinusoids.unsqueeze(0)


class ResidualWithLayerDropout(nn.Module):
    def __init__(self, undecayed_dropout_prob=0.1):
        super().__init__()
        self.undecayed_dropout_prob = undecayed_dropout_prob

    def forward(self, layer_input, layer_output, layer_index, total_layers):
        if layer_index is not None and total_layers is not None:
            dropout_prob = 1.0 * self.undecayed_dropout_prob * layer_index / total_layers
        else:
            dropout_prob = 1.0 * self.undecayed_dropout_prob
        if self.training:
            if torch.rand(1) < dropout_prob:
                return layer_input
            return layer_output + layer_input
        return (1 - dropout_prob) * layer_output + layer_input


class QaNetEncoderBlock(nn.Module):
    def __init__(self, hidden_dim=8, conv_kernel_size=3, num_convs=2, num_heads=2, dropout_prob=0.1):
        super().__init__()
        self._use_positional_encoding = True
        self._conv_norm_layers = nn.ModuleList([nn.LayerNorm(hidden_dim) for _ in range(num_convs)])
        self._conv_layers = nn.ModuleList()
        for _ in range(num_convs):
            padding = nn.ConstantPad1d((conv_kernel_size // 2, (conv_kernel_size - 1) // 2), 0)
            depthwise_conv = nn.Conv1d(hidden_dim, hidden_dim, conv_kernel_size, groups=hidden_dim)
            pointwise_conv = nn.Conv1d(hidden_dim, hidden_dim, 1)
            self._conv_layers.append(nn.Sequential(padding, depthwise_conv, pointwise_conv, nn.ReLU()))
        self.attention_norm_layer = nn.LayerNorm(hidden_dim)
        self.attention_layer = nn.MultiheadAttention(hidden_dim, num_heads, batch_first=True)
        self.feedforward_norm_layer = nn.LayerNorm(hidden_dim)
        self.feedforward = nn.Sequential(nn.Linear(hidden_dim, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, hidden_dim))
        self.dropout = nn.Dropout(dropout_prob)
        self.residual_with_layer_dropout = ResidualWithLayerDropout(0.1)

    def forward(self, inputs, mask=None):
        output = add_positional_features(inputs) if self._use_positional_encoding else inputs
        total_sublayers = len(self._conv_layers) + 2
        sublayer_count = 0
        for conv_norm_layer, conv_layer in zip(self._conv_norm_layers, self._conv_layers):
            conv_norm_out = self.dropout(conv_norm_layer(output))
            conv_out = self.dropout(conv_layer(conv_norm_out.transpose_(1, 2)).transpose_(1, 2))  # <-- IPL001: transpose_ modifies the ReLU output that ReLU saved for backward
            sublayer_count += 1
            output = self.residual_with_layer_dropout(output, conv_out, sublayer_count, total_sublayers)

        attention_norm_out = self.dropout(self.attention_norm_layer(output))
        key_padding_mask = None if mask is None else ~mask
        attention_out, _ = self.attention_layer(attention_norm_out, attention_norm_out, attention_norm_out,
                                                key_padding_mask=key_padding_mask)
        attention_out = self.dropout(attention_out)
        sublayer_count += 1
        output = self.residual_with_layer_dropout(output, attention_out, sublayer_count, total_sublayers)

        feedforward_norm_out = self.dropout(self.feedforward_norm_layer(output))
        feedforward_out = self.dropout(self.feedforward(feedforward_norm_out))
        sublayer_count += 1
        return self.residual_with_layer_dropout(output, feedforward_out, sublayer_count, total_sublayers)


block = QaNetEncoderBlock()
passage = torch.randn(2, 6, 8)
mask = torch.tensor([[True] * 6, [True] * 4 + [False] * 2])
encoded = block(passage, mask)
loss = encoded.pow(2).mean()
loss.backward()
