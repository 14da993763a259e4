# label: safe
# why: x_recon.clamp_(-1., 1.) writes to the freshly computed x0 estimate only on the @torch.no_grad sampling path, and even there nothing saved for backward aliases it; training goes through p_losses, which never clamps.
# source: https://github.com/lucidrains/denoising-diffusion-pytorch/blob/79e0765675a79796fc724a1016873a373453e8e1/denoising_diffusion_pytorch/denoising_diffusion_pytorch.py
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def exists(x):
    return x is not None


def default(val, d):
    if exists(val):
        return val
    return d() if callable(d) else d


def extract(a, t, x_shape):
    b, *_ = t.shape
    out = a.gather(-1, t)
    return out.reshape(b, *((1,) * (len(x_shape) - 1)))


def noise_like(shape, device, repeat=False):
    repeat_noise = lambda: torch.randn((1, *shape[1:]), device=device).repeat(shape[0], *((1,) * (len(shape) - 1)))
    noise = lambda: torch.randn(shape, device=device)
    return repeat_noise() if repeat else noise()


class Unet(nn.Module):
    def __init__(self, dim=8, channels=3, num_timesteps=10):
        super().__init__()
        self.time_emb = nn.Embedding(num_timesteps, dim)
        self.init_conv = nn.Conv2d(channels, dim, 3, padding=1)
        self.mid = nn.Conv2d(dim, dim, 3, padding=1)
        self.final_conv = nn.Conv2d(dim, channels, 1)

    def forward(self, x, time):
        h = self.init_conv(x) + self.time_emb(time)[:, :, None, None]
        h = F.silu(self.mid(F.silu(h)))
        return self.final_conv(h)


class GaussianDiffusion(nn.Module):
    def __init__(self, denoise_fn, beta_start=0.0001, beta_end=0.02, num_diffusion_timesteps=10, loss_type='l1'):
        super().__init__()
        self.denoise_fn = denoise_fn
        betas = torch.linspace(beta_start, beta_end, num_diffusion_timesteps, dtype=torch.float64)
        self.num_timesteps = int(betas.shape[0])
        self.loss_type = loss_type
        alphas = 1. - betas
        alphas_cumprod = torch.cumprod(alphas, dim=0)
        alphas_cumprod_prev = torch.cat([torch.ones(1, dtype=torch.float64), alphas_cumprod[:-1]])
        to_torch = partial(torch.as_tensor, dtype=torch.float32)
        self.register_buffer('betas', to_torch(betas))
        self.register_buffer('sqrt_alphas_cumprod', to_torch(torch.sqrt(alphas_cumprod)))
        self.register_buffer('sqrt_one_minus_alphas_cumprod', to_torch(torch.sqrt(1. - alphas_cumprod)))
        self.register_buffer('sqrt_recip_alphas_cumprod', to_torch(torch.sqrt(1. / alphas_cumprod)))
        self.register_buffer('sqrt_recipm1_alphas_cumprod', to_torch(torch.sqrt(1. / alphas_cumprod - 1)))
        posterior_variance = betas * (1. - alphas_cumprod_prev) / (1. - alphas_cumprod)
        self.register_buffer('posterior_variance', to_torch(posterior_variance))
        self.register_buffer('posterior_log_variance_clipped', to_torch(torch.log(torch.clamp(posterior_variance, min=1e-20))))
        self.register_buffer('posterior_mean_coef1', to_torch(betas * torch.sqrt(alphas_cumprod_prev) / (1. - alphas_cumprod)))
        self.register_buffer('posterior_mean_coef2', to_torch((1. - alphas_cumprod_prev) * torch.sqrt(alphas) / (1. - alphas_cumprod)))

    def predict_start_from_noise(self, x_t, t, noise):
        return (
            extract(self.sqrt_recip_alphas_cumprod, t, x_t.shape) * x_t -
            extract(self.sqrt_recipm1_alphas_cumprod, t, x_t.shape) * noise
        )

    def q_posterior(self, x_start, x_t, t):
        posterior_mean = (
            extract(self.posterior_mean_coef1, t, x_t.shape) * x_start +
            extract(self.posterior_mean_coef2, t, x_t.shape) * x_t
        )
        posterior_variance = extract(self.posterior_variance, t, x_t.shape)
        posterior_log_variance_clipped = extract(self.posterior_log_variance_clipped, t, x_t.shape)
        return posterior_mean, posterior_variance, posterior_log_variance_clipped

    def p_mean_variance(self, x, t, clip_denoised: bool):
        x_recon = self.predict_start_from_noise(x, t=t, noise=self.denoise_fn(x, t))
        if clip_denoised:
            x_recon.clamp_(-1., 1.)
        model_mean, posterior_variance, posterior_log_variance = self.q_posterior(x_start=x_recon, x_t=x, t=t)
        return model_mean, posterior_variance, posterior_log_variance

    @torch.no_grad()
    def p_sample(self, x, t, clip_denoised=True, repeat_noise=False):
        b, *_, device = *x.shape, x.device
        model_mean, _, model_log_variance = self.p_mean_variance(x=x, t=t, clip_denoised=clip_denoised)
        noise = noise_like(x.shape, device, repeat_noise)
        nonzero_mask = (1 - (t == 0).float()).reshape(b, *((1,) * (len(x.shape) - 1)))
        return model_mean + nonzero_mask * (0.5 * model_log_variance).exp() * noise

    @torch.no_grad()
    def p_sample_loop(self, shape):
        device = self.betas.device
        b = shape[0]
        img = torch.randn(shape, device=device)
        for i in reversed(range(0, self.num_timesteps)):
            img = self.p_sample(img, torch.full((b,), i, device=device, dtype=torch.long))
        return img

    def q_sample(self, x_start, t, noise=None):
        noise = default(noise, lambda: torch.randn_like(x_start))
        return (
            extract(self.sqrt_alphas_cumprod, t, x_start.shape) * x_start +
            extract(self.sqrt_one_minus_alphas_cumprod, t, x_start.shape) * noise
        )

    def p_losses(self, x_start, t, noise=None):
        noise = default(noise, lambda: torch.randn_like(x_start))
        x_noisy = self.q_sample(x_start=x_start, t=t, noise=noise)
        x_recon = self.denoise_fn(x_noisy, t)
        if self.loss_type == 'l1':
            loss = (noise - x_recon).abs().mean()
        else:
            loss = F.mse_loss(noise, x_recon)
        return loss

    def forward(self, x, t):
        return self.p_losses(x, t)


def main():
    model = Unet()
    diffusion = GaussianDiffusion(model, num_diffusion_timesteps=10)
    opt = torch.optim.Adam(diffusion.parameters(), lr=1e-3)
    training_images = torch.rand(2, 3, 8, 8) * 2 - 1
    t = torch.randint(0, diffusion.num_timesteps, (2,)).long()
    loss = diffusion(training_images, t)
    loss.backward()
    grad = model.init_conv.weight.grad.clone()
    opt.step()
    sampled_images = diffusion.p_sample_loop((1, 3, 8, 8))
    return loss.detach(), grad, sampled_images


loss, init_conv_grad, sampled_images = main()
