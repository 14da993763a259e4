# label: hazard silent
# why: sample_lcm rebinds x to the model's denoised tensor and then adds noise with `x +=`, which also overwrites the denoised latent the SamplerCustom callback stored as its denoised_output.
# source: https://github.com/Comfy-Org/ComfyUI/pull/2811
import torch
import torch.nn as nn

torch.manual_seed(0)


def default_noise_sampler(x, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return lambda sigma, sigma_next: torch.randn(x.size(), generator=generator, dtype=x.dtype)


@torch.no_grad()
def sample_lcm(model, x, sigmas, extra_args=None, callback=None, disable=None, noise_sampler=None):
    extra_args = {} if extra_args is None else extra_args
    noise_sampler = default_noise_sampler(x) if noise_sampler is None else noise_sampler
    s_in = x.new_ones([x.shape[0]])
    for i in range(len(sigmas) - 1):
        denoised = model(x, sigmas[i] * s_in, **extra_args)
        if callback is not None:
            callback({'x': x, 'i': i, 'sigma': sigmas[i], 'sigma_hat': sigmas[i], 'denoised': denoised})

        x = denoised
        if sigmas[i + 1] > 0:
            x += sigmas[i + 1] * noise_sampler(sigmas[i], sigmas[i + 1])  # <-- IPL002: also rewrites `denoised`, which the callback kept
    return x


class Denoiser(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.net = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x, sigma):
        c_skip = 1.0 / (sigma ** 2 + 1.0)
        return c_skip[:, None, None, None] * x + self.net(x) * sigma[:, None, None, None] * 0.1


class SamplerCustom:
    def sample(self, model, latent_image, sigmas):
        x0_output = {}

        def callback(d):
            x0_output["x0"] = d["denoised"]

        noise = torch.randn(latent_image.shape, generator=torch.Generator().manual_seed(1))
        x = latent_image + noise * sigmas[0]
        samples = sample_lcm(model, x, sigmas, callback=callback)
        out = samples
        out_denoised = x0_output["x0"] if "x0" in x0_output else out
        return out, out_denoised


model = Denoiser()
latent_image = torch.zeros(1, 4, 6, 6)
sigmas = torch.tensor([14.6, 3.0, 1.0, 0.3])
output, denoised_output = SamplerCustom().sample(model, latent_image, sigmas)
