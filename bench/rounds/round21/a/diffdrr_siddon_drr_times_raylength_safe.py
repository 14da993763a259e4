# label: safe
# why: Siddon.forward scales the DRR in place (drr *= raylength) right after torch.nansum, whose backward needs only its input, so the in-place multiply overwrites nothing a backward node saved; gradients reach the pose through both factors.
# source: https://github.com/eigenvivek/DiffDRR/blob/01e557cce83969a751f9e0e852599fa545826ba7/diffdrr/renderers.py
import torch

torch.manual_seed(0)


class Siddon(torch.nn.Module):
    """Differentiable X-ray renderer implemented with Siddon's method for exact raytracing."""

    def __init__(self, eps=1e-8):
        super().__init__()
        self.eps = eps

    def dims(self, volume):
        return torch.tensor(volume.shape).to(volume) + 1

    def maxidx(self, volume):
        return volume.numel() - 1

    def forward(self, volume, spacing, source, target):
        dims = self.dims(volume)
        maxidx = self.maxidx(volume)

        alphas = _get_alphas(source, target, spacing, dims, self.eps)
        alphamid = (alphas[..., 0:-1] + alphas[..., 1:]) / 2
        voxels = _get_voxel(alphamid, source, target, volume, spacing, dims, maxidx, self.eps)

        # Step length for alphas out of range will be nan
        # These nans cancel out voxels convereted to 0 index
        step_length = torch.diff(alphas, dim=-1)
        weighted_voxels = voxels * step_length

        drr = torch.nansum(weighted_voxels, dim=-1)
        raylength = (target - source + self.eps).norm(dim=-1)
        drr *= raylength
        return drr


def _get_alphas(source, target, spacing, dims, eps):
    alphax = torch.arange(dims[0]).to(source) * spacing[0]
    alphay = torch.arange(dims[1]).to(source) * spacing[1]
    alphaz = torch.arange(dims[2]).to(source) * spacing[2]

    sx, sy, sz = source[..., 0], source[..., 1], source[..., 2]
    alphax = alphax.expand(len(source), 1, -1) - sx.unsqueeze(-1)
    alphay = alphay.expand(len(source), 1, -1) - sy.unsqueeze(-1)
    alphaz = alphaz.expand(len(source), 1, -1) - sz.unsqueeze(-1)

    sdd = target - source + eps
    alphax = alphax / sdd[..., 0].unsqueeze(-1)
    alphay = alphay / sdd[..., 1].unsqueeze(-1)
    alphaz = alphaz / sdd[..., 2].unsqueeze(-1)
    alphas = torch.cat([alphax, alphay, alphaz], dim=-1)

    alphamin, alphamax = _get_alpha_minmax(source, target, spacing, dims, eps)
    good_idxs = torch.logical_and(alphas >= alphamin, alphas <= alphamax)
    alphas[~good_idxs] = torch.nan

    alphas = torch.sort(alphas, dim=-1).values
    alphas = alphas[..., ~alphas.isnan().all(dim=0).all(dim=0)]
    return alphas


def _get_alpha_minmax(source, target, spacing, dims, eps):
    sdd = target - source + eps
    planes = torch.zeros(3).to(source)
    alpha0 = (planes * spacing - source) / sdd
    planes = (dims - 1).to(source)
    alpha1 = (planes * spacing - source) / sdd
    alphas = torch.stack([alpha0, alpha1]).to(source)

    alphamin = alphas.min(dim=0).values.max(dim=-1).values.unsqueeze(-1)
    alphamax = alphas.max(dim=0).values.min(dim=-1).values.unsqueeze(-1)

    alphamin = torch.where(alphamin < 0.0, 0.0, alphamin)
    alphamax = torch.where(alphamax > 1.0, 1.0, alphamax)
    return alphamin, alphamax


def _get_voxel(alpha, source, target, volume, spacing, dims, maxidx, eps):
    idxs = _get_index(alpha, source, target, spacing, dims, maxidx, eps)
    return torch.take(volume, idxs)


def _get_index(alpha, source, target, spacing, dims, maxidx, eps):
    sdd = target - source + eps
    idxs = source.unsqueeze(1) + alpha.unsqueeze(-1) * sdd.unsqueeze(2)
    idxs = idxs / spacing
    idxs = idxs.trunc()
    idxs = (
        idxs[..., 0] * (dims[1] - 1) * (dims[2] - 1)
        + idxs[..., 1] * (dims[2] - 1)
        + idxs[..., 2]
    ).long() + 1
    idxs[idxs < 0] = 0
    idxs[idxs > maxidx] = maxidx
    return idxs


def main():
    volume = torch.rand(6, 6, 6)
    spacing = torch.tensor([1.0, 1.0, 1.0])
    offset = torch.tensor([0.3, -0.2, 0.1], requires_grad=True)
    source = (torch.tensor([[-4.0, 3.0, 3.0]]) + offset).unsqueeze(0)
    u = torch.linspace(0.5, 5.5, 4)
    uu, vv = torch.meshgrid(u, u, indexing="ij")
    target = torch.stack([torch.full_like(uu, 10.0), uu, vv], dim=-1).reshape(1, -1, 3)
    drr = Siddon()(volume, spacing, source, target)
    loss = drr.sum()
    loss.backward()
    return drr.detach(), offset.grad


drr_img, offset_grad = main()
