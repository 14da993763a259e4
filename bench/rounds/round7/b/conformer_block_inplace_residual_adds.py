# label: hazard raises
# why: the conformer encoder layer switched to hidden_states += self.conv(hidden_states) and += 0.5 * self.feed_forward_out(hidden_states); each add overwrites the input that the conv / feed-forward just saved, so training backward fails.
# source: https://github.com/vllm-project/vllm/pull/24500
import torch
import torch.nn as nn

torch.manual_seed(0)


class FeedForward(nn.Module):
    def __init__(self, d_model, d_inner):
        super().__init__()
        self.layer_norm = nn.LayerNorm(d_model)
        self.net = nn.Sequential(nn.Linear(d_model, d_inner), nn.SiLU(), nn.Linear(d_inner, d_model))

    def forward(self, x):
        return self.net(self.layer_norm(x))


class ConvModule(nn.Module):
    def __init__(self, d_model, kernel_size=3):
        super().__init__()
        self.layer_norm = nn.LayerNorm(d_model)
        self.depthwise = nn.Conv1d(d_model, d_model, kernel_size, padding=kernel_size // 2, groups=d_model)
        self.pointwise = nn.Conv1d(d_model, d_model, 1)

    def forward(self, x):
        x = self.layer_norm(x).transpose(1, 2)
        x = self.pointwise(torch.nn.functional.silu(self.depthwise(x)))
        return x.transpose(1, 2)


class ConformerEncoderLayer(nn.Module):
    def __init__(self, d_model=8, n_head=2, d_ffn=16):
        super().__init__()
        self.feed_forward_in = FeedForward(d_model, d_ffn)
        self.layer_norm_att = nn.LayerNorm(d_model)
        self.self_attn = nn.MultiheadAttention(d_model, n_head, batch_first=True)
        self.conv = ConvModule(d_model)
        self.feed_forward_out = FeedForward(d_model, d_ffn)
        self.layer_norm = nn.LayerNorm(d_model)

    def forward(self, x, attention_mask=None):
        x = x + 0.5 * self.feed_forward_in(x)
        norm_x = self.layer_norm_att(x)
        attn_out, _ = self.self_attn(norm_x, norm_x, norm_x, key_padding_mask=attention_mask)
        hidden_states = x + attn_out
        hidden_states += self.conv(hidden_states)  # <-- IPL001: overwrites the input the conv module saved
        hidden_states += 0.5 * self.feed_forward_out(hidden_states)  # <-- IPL001: overwrites the input the feed-forward saved
        return self.layer_norm(hidden_states)


class ConformerEncoder(nn.Module):
    def __init__(self, num_blocks=2, d_model=8):
        super().__init__()
        self.encoders = nn.ModuleList([ConformerEncoderLayer(d_model) for _ in range(num_blocks)])

    def forward(self, xs_pad, masks=None):
        for layer in self.encoders:
            xs_pad = layer(xs_pad, masks)
        return xs_pad


encoder = ConformerEncoder()
encoder.train()
audio_features = torch.randn(2, 6, 8)
out = encoder(audio_features)
loss = out.pow(2).mean()
loss.backward()
