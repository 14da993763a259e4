# label: safe
# why: post-fix rasterize_splats divides by w out of place (means = means * w_inv, scales = scales * w_inv), so neither the means Parameter nor the exp output saved for backward is overwritten.
# source: https://github.com/nerfstudio-project/gsplat/commit/d608d0f2591818159f7936f77dbc81a5deb2b854 (pre-fix examples/simple_trainer.py Runner.rasterize_splats)
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

torch.manual_seed(0)


@dataclass
class Config:
    use_hom_coords: bool = True
    sh_degree: int = 0
    app_opt: bool = False


cfg = Config()


def rasterization(means, quats, scales, opacities, colors, viewmats, Ks, width, height):
    # tiny isotropic splatting stand-in for gsplat.rasterization
    cam = (viewmats[:, None, :3, :3] @ means[None, :, :, None]).squeeze(-1) + viewmats[:, None, :3, 3]
    uv = (Ks[:, None, :, :] @ (cam / cam[..., 2:3]).unsqueeze(-1)).squeeze(-1)[..., :2]
    ys, xs = torch.meshgrid(torch.arange(height, dtype=torch.float32), torch.arange(width, dtype=torch.float32), indexing="ij")
    pix = torch.stack([xs, ys], -1).reshape(1, -1, 1, 2)
    sigma = scales.mean(-1) * Ks[:, None, 0, 0] / cam[..., 2]
    d2 = ((pix - uv[:, None]) ** 2).sum(-1) / (sigma[:, None] ** 2 + 1e-6)
    alpha = opacities[None, None] * torch.exp(-0.5 * d2)
    rgb = (alpha[..., None] * colors[None, None]).sum(-2) / (alpha.sum(-1, keepdim=True) + 1e-6)
    return rgb.reshape(Ks.shape[0], height, width, 3)


class Runner:
    def __init__(self, num_splats=32):
        self.cfg = cfg
        self.splats = torch.nn.ParameterDict({
            "means": torch.nn.Parameter(torch.randn(num_splats, 3) * 0.5),
            "quats": torch.nn.Parameter(F.normalize(torch.randn(num_splats, 4), dim=-1)),
            "scales": torch.nn.Parameter(torch.full((num_splats, 3), -1.5)),
            "opacities": torch.nn.Parameter(torch.zeros(num_splats)),
            "w": torch.nn.Parameter(torch.zeros(num_splats)),
            "sh0": torch.nn.Parameter(torch.rand(num_splats, 1, 3)),
        })
        self.optimizer = torch.optim.Adam(self.splats.parameters(), lr=1e-2)

    def rasterize_splats(self, camtoworlds: Tensor, Ks: Tensor, width: int, height: int, **kwargs):
        means = self.splats["means"]  # [N, 3]
        quats = self.splats["quats"]  # [N, 4]
        scales = torch.exp(self.splats["scales"])  # [N, 3]
        opacities = torch.sigmoid(self.splats["opacities"])  # [N,]

        if cfg.use_hom_coords:
            w_inv = 1.0 / torch.exp(self.splats["w"]).unsqueeze(1)
            means = means * w_inv
            scales = scales * w_inv

        colors = torch.sigmoid(self.splats["sh0"][:, 0])  # [N, 3]
        viewmats = torch.linalg.inv(camtoworlds)
        return rasterization(means, quats, scales, opacities, colors, viewmats, Ks, width, height)

    def train_step(self, camtoworlds, Ks, pixels):
        renders = self.rasterize_splats(camtoworlds, Ks, width=pixels.shape[2], height=pixels.shape[1])
        loss = F.l1_loss(renders, pixels)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.detach()


def main():
    runner = Runner()
    camtoworlds = torch.eye(4)[None].clone()
    camtoworlds[0, 2, 3] = -4.0
    Ks = torch.tensor([[[8.0, 0.0, 8.0], [0.0, 8.0, 8.0], [0.0, 0.0, 1.0]]])
    pixels = torch.rand(1, 16, 16, 3)
    losses = torch.stack([runner.train_step(camtoworlds, Ks, pixels) for _ in range(2)])
    return losses, runner.splats["means"].detach().clone()


losses, means = main()
