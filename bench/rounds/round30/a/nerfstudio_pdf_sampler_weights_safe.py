# label: safe
# why: the refactor commit pads with `weights = weights + padding / weights.shape[-1]`, a new tensor, so the coarse weights the RGB renderer saved (and the caller still owns) are left untouched; only the local weights_sum is updated in place.
# source: https://github.com/nerfstudio-project/nerfstudio/commit/55cf7594352fb87e92dd761d4d15d13bd3d45de3
import torch
import torch.nn as nn

torch.manual_seed(0)


class PDFSampler(nn.Module):
    def __init__(self, num_samples=8, include_original=True):
        super().__init__()
        self.num_samples = num_samples
        self.include_original = include_original

    def generate_ray_samples(self, coarse_ts, weights, num_samples=None, eps=1e-5):
        num_samples = num_samples or self.num_samples
        weights = weights[..., :-1]

        # Add small offset to rays with zero weight to prevent NaNs
        weights_sum = torch.sum(weights, dim=-1, keepdim=True)
        padding = torch.relu(eps - weights_sum)
        weights = weights + padding / weights.shape[-1]
        weights_sum += padding

        pdf = weights / weights_sum
        cdf = torch.min(torch.ones_like(pdf), torch.cumsum(pdf, dim=-1))
        cdf = torch.cat([torch.zeros_like(cdf[..., :1]), cdf], dim=-1)

        u = torch.linspace(0.0, 1.0, steps=num_samples).expand(*cdf.shape[:-1], num_samples).contiguous()
        inds = torch.searchsorted(cdf.detach(), u, right=True)
        below = torch.clamp(inds - 1, 0, coarse_ts.shape[-1] - 1)
        above = torch.clamp(inds, 0, coarse_ts.shape[-1] - 1)
        ts = 0.5 * (torch.gather(coarse_ts, -1, below) + torch.gather(coarse_ts, -1, above))

        if self.include_original:
            ts, _ = torch.sort(torch.cat([coarse_ts, ts], -1), -1)
        else:
            ts, _ = torch.sort(ts, -1)

        # Stop gradients
        ts = ts.detach()
        return ts


def get_weights(ts, density):
    deltas = torch.cat([ts[..., 1:] - ts[..., :-1], torch.full_like(ts[..., :1], 1e10)], -1)
    delta_density = deltas * density
    alphas = 1 - torch.exp(-delta_density)
    transmittance = torch.cumsum(delta_density[..., :-1], dim=-1)
    transmittance = torch.cat([torch.zeros_like(transmittance[..., :1]), transmittance], dim=-1)
    transmittance = torch.exp(-transmittance)
    return alphas * transmittance


class NeRFModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.field = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 4))
        self.sampler_pdf = PDFSampler(num_samples=8)

    def query(self, ts):
        out = self.field(ts.unsqueeze(-1))
        return torch.relu(out[..., 0]), torch.sigmoid(out[..., 1:])

    def get_outputs(self, coarse_ts):
        density_coarse, rgb_coarse_samples = self.query(coarse_ts)
        weights_coarse = get_weights(coarse_ts, density_coarse)
        rgb_coarse = torch.sum(weights_coarse.unsqueeze(-1) * rgb_coarse_samples, dim=-2)

        fine_ts = self.sampler_pdf.generate_ray_samples(coarse_ts, weights_coarse)
        density_fine, rgb_fine_samples = self.query(fine_ts)
        weights_fine = get_weights(fine_ts, density_fine)
        rgb_fine = torch.sum(weights_fine.unsqueeze(-1) * rgb_fine_samples, dim=-2)
        return rgb_coarse, rgb_fine


def main():
    model = NeRFModel()
    coarse_ts = torch.linspace(0.1, 4.0, 12).expand(3, 12).contiguous()
    target_rgb = torch.rand(3, 3)
    rgb_coarse, rgb_fine = model.get_outputs(coarse_ts)
    loss = ((rgb_coarse - target_rgb) ** 2).mean() + ((rgb_fine - target_rgb) ** 2).mean()
    loss.backward()
    return loss.detach(), model.field[0].weight.grad


loss, field_grad = main()
