# label: safe
# why: the fix clones the input before the batch/time/lead loops, so the per-step slice writes only touch StormCast's private copy and the caller's initial condition is preserved.
# source: https://github.com/NVIDIA/earth2studio/pull/1134
import torch
import torch.nn as nn

torch.manual_seed(0)


class EDMDenoiser(nn.Module):
    def __init__(self, c=2):
        super().__init__()
        self.net = nn.Conv2d(2 * c + 1, c, 3, 1, 1)

    def forward(self, x_noisy, sigma, condition):
        s = sigma.view(-1, 1, 1, 1).expand(x_noisy.shape[0], 1, *x_noisy.shape[2:])
        return x_noisy - self.net(torch.cat([x_noisy, condition, s], 1)) * 0.1


def edm_sampler(net, latents, condition, num_steps=3, sigma_max=1.0, sigma_min=0.05):
    t_steps = torch.linspace(sigma_max, sigma_min, num_steps)
    x_next = latents * t_steps[0]
    for i in range(num_steps - 1):
        t_cur, t_next = t_steps[i], t_steps[i + 1]
        denoised = net(x_next, t_cur.view(1), condition)
        d_cur = (x_next - denoised) / t_cur
        x_next = x_next + (t_next - t_cur) * d_cur
    return x_next


class StormCast(nn.Module):
    def __init__(self, c=2):
        super().__init__()
        self.regression_model = nn.Conv2d(c + 1, c, 3, 1, 1)
        self.diffusion_model = EDMDenoiser(c)
        self.sampler_steps = 3

    @torch.inference_mode()
    def _forward(self, x, conditioning):
        x_in = x[:, 0]
        out = self.regression_model(torch.cat([x_in, conditioning[:, 0]], 1))
        gen = torch.Generator().manual_seed(1)
        latents = torch.randn(out.shape, generator=gen)
        edm_out = edm_sampler(self.diffusion_model, latents, out, num_steps=self.sampler_steps)
        return (out + edm_out).unsqueeze(1)

    def __call__(self, x, coords, conditioning):
        output_coords = dict(coords)
        output_coords["lead_time"] = coords["lead_time"] + 1
        x = x.clone()  # prevent editing of argument
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                for k in range(x.shape[2]):
                    x[i, j, k:k + 1] = self._forward(x[i, j, k:k + 1], conditioning[i, j, k:k + 1])
        return x, output_coords

    def create_iterator(self, x, coords, conditioning):
        yield x, coords
        while True:
            x, coords = self.__call__(x, coords, conditioning)
            yield x, dict(coords)


model = StormCast().eval()
x0 = torch.rand(1, 1, 1, 1, 2, 4, 4)
conditioning = torch.rand(1, 1, 1, 1, 1, 4, 4)
coords = {"lead_time": 0}
iterator = model.create_iterator(x0, coords, conditioning)
ic, ic_coords = next(iterator)
step1, step1_coords = next(iterator)
step1_snapshot_mean = step1.mean()
step2, step2_coords = next(iterator)
initial_condition_after = x0
ic_minus_step2 = ic - step2
