# label: hazard raises
# why: ResnetBlock adds the time embedding with `h += ...` onto the output of Block's nn.ReLU, which ReLU saved for its backward; the prior's `x += tanh(a) * tanh(x)` next to it is harmless.
# source: https://github.com/buggyyang/CDC_compression/issues/1
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def exists(x):
    return x is not None


class SinusoidalPosEmb(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        half_dim = self.dim // 2
        emb = math.log(10000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim) * -emb)
        emb = x[:, None] * emb[None, :]
        return torch.cat((emb.sin(), emb.cos()), dim=-1)


class LayerNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.g = nn.Parameter(torch.ones(1, dim, 1, 1))
        self.b = nn.Parameter(torch.zeros(1, dim, 1, 1))

    def forward(self, x):
        var = torch.var(x, dim=1, unbiased=False, keepdim=True)
        mean = torch.mean(x, dim=1, keepdim=True)
        return (x - mean) / (var + self.eps).sqrt() * self.g + self.b


class Block(nn.Module):
    def __init__(self, dim, dim_out, large=False):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(dim, dim_out, 7 if large else 3, padding=3 if large else 1), LayerNorm(dim_out), nn.ReLU()
        )

    def forward(self, x):
        return self.block(x)


class ResnetBlock(nn.Module):
    def __init__(self, dim, dim_out, time_emb_dim=None, large=False):
        super().__init__()
        self.mlp = (
            nn.Sequential(nn.LeakyReLU(0.2), nn.Linear(time_emb_dim, dim_out))
            if exists(time_emb_dim)
            else None
        )
        self.block1 = Block(dim, dim_out, large)
        self.block2 = Block(dim_out, dim_out)
        self.res_conv = nn.Conv2d(dim, dim_out, 1) if dim != dim_out else nn.Identity()

    def forward(self, x, time_emb=None):
        h = self.block1(x)

        if exists(time_emb):
            h += self.mlp(time_emb)[:, :, None, None]  # <-- IPL001: h is the saved output of Block's ReLU

        h = self.block2(h)
        return h + self.res_conv(x)


class PriorFunction(nn.Module):
    def __init__(self, parallel_dims, in_features, out_features, scale):
        super().__init__()
        self.weight = nn.Parameter(torch.full((parallel_dims, 1, 1, in_features, out_features), scale))
        self.bias = nn.Parameter(torch.empty(parallel_dims, 1, 1, 1, out_features).uniform_(-0.5, 0.5))

    def forward(self, input):
        return torch.matmul(input, F.softplus(self.weight)) + self.bias


class FlexiblePrior(nn.Module):
    def __init__(self, channels=4, dims=(3, 3), init_scale=10.):
        super().__init__()
        dims = [1] + list(dims) + [1]
        self.chain_len = len(dims) - 1
        scale = init_scale ** (1 / self.chain_len)
        self.affine = nn.ModuleList([PriorFunction(channels, dims[i], dims[i + 1], math.log(math.expm1(1 / scale / dims[i + 1])))
                                     for i in range(self.chain_len)])
        self.a = nn.ParameterList([nn.Parameter(torch.zeros(channels, 1, 1, 1, dims[i + 1])) for i in range(self.chain_len - 1)])

    def cdf(self, x):
        x = x.transpose(0, 1).unsqueeze(-1)
        for i in range(self.chain_len - 1):
            x = self.affine[i](x)
            x += torch.tanh(self.a[i]) * torch.tanh(x)
        return self.affine[-1](x).squeeze(-1).transpose(0, 1)

    def likelihood(self, x):
        lower = self.cdf(x - 0.5)
        upper = self.cdf(x + 0.5)
        sign = -torch.sign(lower + upper).detach()
        return torch.abs(torch.sigmoid(sign * upper) - torch.sigmoid(sign * lower)) + 1e-9


class Unet(nn.Module):
    def __init__(self, dim=4, channels=3):
        super().__init__()
        self.time_mlp = nn.Sequential(SinusoidalPosEmb(dim), nn.Linear(dim, dim * 2), nn.LeakyReLU(0.2), nn.Linear(dim * 2, dim))
        self.init_conv = nn.Conv2d(channels, dim, 3, padding=1)
        self.downs = nn.ModuleList([ResnetBlock(dim, dim * 2, time_emb_dim=dim), ResnetBlock(dim * 2, dim * 2, time_emb_dim=dim)])
        self.final_conv = nn.Conv2d(dim * 2, channels, 1)

    def forward(self, x, time, context):
        t = self.time_mlp(time)
        x = self.init_conv(x) + context
        for block in self.downs:
            x = block(x, t)
        return self.final_conv(x)


denoise_fn = Unet()
prior = FlexiblePrior(channels=4)
x_start = torch.rand(2, 3, 8, 8) * 2 - 1
context = torch.randn(2, 4, 8, 8)
t = torch.randint(0, 100, (2,)).float()
noise = torch.randn_like(x_start)
alphas_cumprod_t = torch.rand(2)[:, None, None, None]
x_noisy = alphas_cumprod_t.sqrt() * x_start + (1 - alphas_cumprod_t).sqrt() * noise
fit = denoise_fn(x_noisy, t, context)
bpp = -torch.log2(prior.likelihood(context.round())).mean()
loss = F.mse_loss(fit, noise) + 0.01 * bpp
loss.backward()
