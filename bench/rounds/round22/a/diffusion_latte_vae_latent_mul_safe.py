# label: safe
# why: Latte scales the sampled VAE latent in place with .mul_(0.18215) under torch.no_grad(); the sample is a fresh tensor that no recorded op saved, and the diffusion loss is built afterwards from the scaled value, so nothing autograd needs is overwritten.
# source: https://github.com/Vchitect/Latte/issues/72
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DiagonalGaussianDistribution(object):
    def __init__(self, parameters):
        self.parameters = parameters
        self.mean, self.logvar = torch.chunk(parameters, 2, dim=1)
        self.logvar = torch.clamp(self.logvar, -30.0, 20.0)
        self.std = torch.exp(0.5 * self.logvar)

    def sample(self):
        return self.mean + self.std * torch.randn_like(self.mean)


class AutoencoderKLStub(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Conv2d(3, 8, 4, stride=4)

    def encode(self, x):
        class Out:
            pass
        out = Out()
        out.latent_dist = DiagonalGaussianDistribution(self.encoder(x))
        return out


class LatteStub(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.temporal = nn.Conv3d(channels, channels, (3, 1, 1), padding=(1, 0, 0))
        self.spatial = nn.Conv3d(channels, channels, (1, 3, 3), padding=(0, 1, 1))
        self.t_embed = nn.Linear(1, channels)

    def forward(self, x, t):
        h = x + self.t_embed(t[:, None].float())[:, :, None, None, None]
        return self.spatial(F.silu(self.temporal(h)))


def main():
    vae = AutoencoderKLStub()
    model = LatteStub()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    alphas_cumprod = torch.linspace(0.99, 0.01, 50)
    video = torch.rand(2, 4, 3, 16, 16) * 2 - 1  # b f c h w
    losses = []
    for step in range(2):
        with torch.no_grad():
            b, _, _, _, _ = video.shape
            x = video.flatten(0, 1)  # (b f) c h w
            x = vae.encode(x).latent_dist.sample().mul_(0.18215)
            x = x.view(b, -1, *x.shape[1:]).permute(0, 2, 1, 3, 4)  # b c f h w
        t = torch.randint(0, 50, (b,))
        noise = torch.randn_like(x)
        a = alphas_cumprod[t].view(-1, 1, 1, 1, 1)
        x_t = a.sqrt() * x + (1 - a).sqrt() * noise
        loss = F.mse_loss(model(x_t, t), noise)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return torch.stack(losses), model.temporal.weight.detach()


losses, temporal_weight = main()
