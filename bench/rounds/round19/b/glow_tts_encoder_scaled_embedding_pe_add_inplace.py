# label: safe
# why: x is the fresh product of the embedding and a Python scalar (neither op keeps x for backward), so adding the positional-encoding buffer in place is equivalent to x = x + pe
# source: https://github.com/coqui-ai/TTS/blob/77c577ddab6cc803c9dbb4a58be003ffab4dfaf3/mozilla_voice_tts/tts/layers/glow_tts/encoder.py
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def sequence_mask(sequence_length, max_len):
    seq_range = torch.arange(max_len, dtype=sequence_length.dtype)
    return seq_range.unsqueeze(0) < sequence_length.unsqueeze(1)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=32):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.pe = pe


class DurationPredictor(nn.Module):
    def __init__(self, in_channels, filter_channels, kernel_size):
        super().__init__()
        self.conv_1 = nn.Conv1d(in_channels, filter_channels, kernel_size, padding=kernel_size // 2)
        self.proj = nn.Conv1d(filter_channels, 1, 1)

    def forward(self, x, x_mask):
        x = torch.relu(self.conv_1(x * x_mask))
        return self.proj(x * x_mask) * x_mask


class Encoder(nn.Module):
    def __init__(self, num_chars=10, out_channels=4, hidden_channels=8, num_heads=2, num_layers=1):
        super().__init__()
        self.hidden_channels = hidden_channels
        self.emb = nn.Embedding(num_chars, hidden_channels)
        nn.init.normal_(self.emb.weight, 0.0, hidden_channels ** -0.5)
        self.register_buffer("pe", PositionalEncoding(hidden_channels).pe)
        layer = nn.TransformerEncoderLayer(hidden_channels, num_heads, dim_feedforward=16, dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
        self.proj_m = nn.Conv1d(hidden_channels, out_channels, 1)
        self.proj_s = nn.Conv1d(hidden_channels, out_channels, 1)
        self.duration_predictor = DurationPredictor(hidden_channels, 8, 3)

    def forward(self, x, x_lengths):
        x = self.emb(x) * math.sqrt(self.hidden_channels)
        x += self.pe[: x.shape[1]].unsqueeze(0)
        x = torch.transpose(x, 1, -1)
        x_mask = torch.unsqueeze(sequence_mask(x_lengths, x.size(2)), 1).to(x.dtype)
        x = self.encoder(x.permute(2, 0, 1), src_key_padding_mask=~(x_mask.squeeze(1).to(bool)))
        x = x.permute(1, 2, 0)
        x_dp = torch.detach(x)
        x_m = self.proj_m(x) * x_mask
        x_logs = self.proj_s(x) * x_mask
        logw = self.duration_predictor(x_dp, x_mask)
        return x_m, x_logs, logw, x_mask


enc = Encoder()
tokens = torch.randint(0, 10, (2, 7))
lengths = torch.tensor([7, 5])
x_m, x_logs, logw, x_mask = enc(tokens, lengths)
loss = (x_m.pow(2) + x_logs.exp()).sum() / x_mask.sum() + logw.pow(2).mean()
loss.backward()
