# label: safe
# why: the first masked_fill_ zeroes padded frames of the LayerNorm output, which layer_norm's backward does not need, and the second zeroes the pointwise_conv2 output, which conv1d's backward does not save.
# source: https://github.com/wenet-e2e/wenet/blob/015469960db73eb19c49a48c020d5ac9db69bae5/wenet/models/transformer/convolution.py
import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvolutionModule(nn.Module):
    """ConvolutionModule in Conformer model."""

    def __init__(self, channels, kernel_size=5, activation=nn.SiLU(), bias=True):
        super().__init__()
        self.pointwise_conv1 = nn.Conv1d(channels, 2 * channels, kernel_size=1, bias=bias)
        padding = (kernel_size - 1) // 2
        self.lorder = 0
        self.depthwise_conv = nn.Conv1d(channels, channels, kernel_size, padding=padding, groups=channels, bias=bias)
        self.norm = nn.BatchNorm1d(channels)
        self.pointwise_conv2 = nn.Conv1d(channels, channels, kernel_size=1, bias=bias)
        self.activation = activation

    def forward(self, x, mask_pad):
        x = x.transpose(1, 2)  # (#batch, channels, time)
        if mask_pad.size(2) > 0:
            x.masked_fill_(~mask_pad, 0.0)
        x = self.pointwise_conv1(x)
        x = nn.functional.glu(x, dim=1)
        x = self.depthwise_conv(x)
        x = self.activation(self.norm(x))
        x = self.pointwise_conv2(x)
        if mask_pad.size(2) > 0:
            x.masked_fill_(~mask_pad, 0.0)
        return x.transpose(1, 2)


class ConformerEncoderLayer(nn.Module):
    def __init__(self, size, n_head=2, dropout_rate=0.1):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(size, n_head, batch_first=True)
        self.feed_forward = nn.Sequential(nn.Linear(size, 4 * size), nn.SiLU(), nn.Linear(4 * size, size))
        self.conv_module = ConvolutionModule(size)
        self.norm_ff = nn.LayerNorm(size, eps=1e-5)
        self.norm_mha = nn.LayerNorm(size, eps=1e-5)
        self.norm_conv = nn.LayerNorm(size, eps=1e-5)
        self.norm_final = nn.LayerNorm(size, eps=1e-5)
        self.dropout = nn.Dropout(dropout_rate)

    def forward(self, x, mask, mask_pad):
        residual = x
        x = self.norm_mha(x)
        x_att, _ = self.self_attn(x, x, x, key_padding_mask=~mask.squeeze(1))
        x = residual + self.dropout(x_att)

        residual = x
        x = self.norm_conv(x)
        x = self.conv_module(x, mask_pad)
        x = residual + self.dropout(x)

        residual = x
        x = self.norm_ff(x)
        x = residual + self.dropout(self.feed_forward(x))
        return self.norm_final(x)


B, T, D, vocab = 3, 12, 8, 10
layers = nn.ModuleList([ConformerEncoderLayer(D) for _ in range(2)])
ctc = nn.Linear(D, vocab)
xs = torch.randn(B, T, D)
xs_lens = torch.tensor([12, 9, 6])
masks = (torch.arange(T)[None, :] < xs_lens[:, None]).unsqueeze(1)  # (B, 1, T)
mask_pad = masks

for layer in layers:
    xs = layer(xs, masks, mask_pad)
log_probs = ctc(xs).log_softmax(-1).transpose(0, 1)
targets = torch.randint(1, vocab, (B, 4))
loss = nn.functional.ctc_loss(log_probs, targets, xs_lens, torch.tensor([4, 4, 3]))
loss.backward()
