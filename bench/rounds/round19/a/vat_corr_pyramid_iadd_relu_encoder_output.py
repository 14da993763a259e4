# label: hazard raises
# why: each Encoder4D ends in nn.ReLU(), whose backward needs its output, and corr4 += corr5_upsampled / corr3 += corr4_upsampled then add the coarser level into those ReLU outputs in place.
# source: https://github.com/Seokju-Cho/Volumetric-Aggregation-Transformer/issues/6
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Conv4d(nn.Module):
    """Separable 4D conv: a 2D conv over the query plane, then one over the support plane."""

    def __init__(self, in_channels, out_channels, stride_q, stride_s):
        super().__init__()
        self.conv_q = nn.Conv2d(in_channels, out_channels, 3, stride_q, 1)
        self.conv_s = nn.Conv2d(out_channels, out_channels, 3, stride_s, 1)

    def forward(self, x):
        B, L, Hq, Wq, Hs, Ws = x.shape
        x = x.permute(0, 4, 5, 1, 2, 3).reshape(B * Hs * Ws, L, Hq, Wq)
        x = self.conv_q(x)
        L, Hq, Wq = x.shape[1:]
        x = x.reshape(B, Hs, Ws, L, Hq, Wq).permute(0, 4, 5, 3, 1, 2).reshape(B * Hq * Wq, L, Hs, Ws)
        x = self.conv_s(x)
        Hs, Ws = x.shape[-2:]
        return x.reshape(B, Hq, Wq, L, Hs, Ws).permute(0, 3, 1, 2, 4, 5)


class Encoder4D(nn.Module):
    def __init__(self, corr_levels, strides, group):
        super().__init__()
        self.conv4d = nn.ModuleList([])
        for i, (sq, ss) in enumerate(strides):
            self.conv4d.append(nn.ModuleList([
                Conv4d(corr_levels[i], corr_levels[i + 1], sq, ss),
                nn.GroupNorm(group[i], corr_levels[i + 1]),
                nn.ReLU(),  # No inplace for residual
            ]))

    def forward(self, x):
        residuals = []
        for conv, norm, act in self.conv4d:
            x = conv(x)
            B, L = x.shape[:2]
            x = act(norm(x.reshape(B, L, -1)).reshape(x.shape))
        return x, residuals


class Interpolate4d(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.size = size

    def forward(self, x):
        B, L, H_q, W_q, H_s, W_s = x.size()
        x = x.permute(0, 4, 5, 1, 2, 3).reshape(B * H_s * W_s, L, H_q, W_q)
        x = F.interpolate(x, size=self.size, mode='bilinear', align_corners=True)
        x = x.reshape(B, H_s, W_s, L, *self.size).permute(0, 3, 4, 5, 1, 2)
        return x


class MixerBlock(nn.Module):
    """Stand-in for the 4D swin block: a channel MLP over the correlation volume."""

    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, x):
        y = x.movedim(1, -1)
        return self.mlp(self.norm(y)).movedim(-1, 1)


class OurModel(nn.Module):
    def __init__(self, inch=(3, 5, 4), dim=8):
        super().__init__()
        self.encoders = nn.ModuleList([
            Encoder4D((inch[0], 4, dim), ((2, 1), (1, 2)), (2, 4)),
            Encoder4D((inch[1], 4, dim), ((2, 2), (1, 1)), (2, 4)),
            Encoder4D((inch[2], 4, dim), ((2, 2), (1, 1)), (2, 4)),
        ])
        self.transformer = nn.ModuleList([MixerBlock(dim) for _ in range(3)])
        self.upscale = nn.ModuleList([Interpolate4d(size=(4, 4)), Interpolate4d(size=(8, 8))])
        self.decoder = nn.Sequential(nn.Conv2d(dim, 8, 3, padding=1), nn.ReLU(True), nn.Conv2d(8, 2, 3, padding=1))

    def forward(self, hypercorr_pyramid):
        corr5 = self.encoders[0](hypercorr_pyramid[0])[0]
        corr4 = self.encoders[1](hypercorr_pyramid[1])[0]
        corr3 = self.encoders[2](hypercorr_pyramid[2])[0]

        corr5 = corr5 + self.transformer[0](corr5)
        corr5_upsampled = self.upscale[0](corr5)

        corr4 += corr5_upsampled  # <-- IPL001: corr4 is the ReLU output its backward needs
        corr4 = corr4 + self.transformer[1](corr4)
        corr4_upsampled = self.upscale[1](corr4)

        corr3 += corr4_upsampled  # <-- IPL001: same for corr3
        corr3 = corr3 + self.transformer[2](corr3)
        x = corr3.mean(dim=(-2, -1))
        x = F.interpolate(x, size=(16, 16), mode='bilinear', align_corners=True)
        return self.decoder(x)


model = OurModel()
# hypercorrelations of three backbone stages: B, L, H_q, W_q, H_s, W_s
hypercorr_pyramid = [
    torch.randn(2, 3, 4, 4, 8, 8),
    torch.randn(2, 5, 8, 8, 8, 8),
    torch.randn(2, 4, 16, 16, 8, 8),
]
query_mask = torch.randint(0, 2, (2, 16, 16))
logit_mask = model(hypercorr_pyramid)
loss = F.cross_entropy(logit_mask, query_mask)
loss.backward()
