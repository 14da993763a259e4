# label: hazard raises
# why: in the save_ply branch of the training loop means is self.splats["means"] itself, an nn.Parameter leaf that requires grad, so means *= w_inv is an in-place write on a leaf with grad mode on (and would otherwise silently rescale the trained means).
# source: https://github.com/nerfstudio-project/gsplat/commit/fc5228204d89e94ea5b183e03abec83a72c4df62
from dataclasses import dataclass

import torch
import torch.nn.functional as F

torch.manual_seed(0)


@dataclass
class Config:
    use_hom_coords: bool = True
    save_ply: bool = True
    ply_steps: tuple = (0,)
    max_steps: int = 1


cfg = Config()


def rasterization(means, quats, scales, opacities, colors, viewmats, Ks, width, height):
    # differentiable stand-in for gsplat.rasterization: splat each gaussian's color onto pixel rows
    cam = (viewmats[:, None, :3, :3] @ means[None, :, :, None]).squeeze(-1) + viewmats[:, None, :3, 3]
    uv = (Ks[:, None, :2, :2] @ (cam[..., :2] / cam[..., 2:3].clamp(min=1e-2))[..., None]).squeeze(-1)
    xs = torch.linspace(-1.0, 1.0, width)
    weights = torch.exp(-((uv[..., :1] - xs) ** 2) / scales.mean(-1, keepdim=True)) * opacities[None, :, None]
    rgb = torch.einsum("cnw,nk->cwk", weights, colors[:, 0, :])
    return rgb[:, None].expand(-1, height, -1, -1), weights.sum(1), {}


def export_splats(means, scales, quats, opacities, sh0, shN, format="ply", save_to=None):
    return {"means": means.detach().clone(), "scales": scales.detach().clone()}


class Runner:
    def __init__(self, num_points=6):
        points = torch.randn(num_points, 3) * 0.3 + torch.tensor([0.0, 0.0, 3.0])
        w = torch.rand(num_points) + 0.5
        params = [
            ("means", torch.nn.Parameter(points), 1.6e-4),
            ("scales", torch.nn.Parameter(torch.log(torch.full((num_points, 3), 0.1))), 5e-3),
            ("quats", torch.nn.Parameter(F.normalize(torch.randn(num_points, 4), dim=-1)), 1e-3),
            ("opacities", torch.nn.Parameter(torch.logit(torch.full((num_points,), 0.5))), 5e-2),
            ("sh0", torch.nn.Parameter(torch.rand(num_points, 1, 3)), 2.5e-3),
            ("shN", torch.nn.Parameter(torch.zeros(num_points, 0, 3)), 2.5e-3 / 20),
        ]
        if cfg.use_hom_coords:
            params.append(("w", torch.nn.Parameter(torch.log(w)), 0.0002))
        self.splats = torch.nn.ParameterDict({n: v for n, v, _ in params})
        self.optimizers = {n: torch.optim.Adam([{"params": self.splats[n], "lr": lr}]) for n, _, lr in params}

    def rasterize_splats(self, camtoworlds, Ks, width, height):
        means = self.splats["means"]  # [N, 3]
        quats = self.splats["quats"]  # [N, 4]
        scales = torch.exp(self.splats["scales"])  # [N, 3]
        opacities = torch.sigmoid(self.splats["opacities"])  # [N,]
        if cfg.use_hom_coords:
            w_inv = 1.0 / torch.exp(self.splats["w"]).unsqueeze(1)
            means = means * w_inv
            scales = scales * w_inv
        colors = torch.cat([self.splats["sh0"], self.splats["shN"]], 1)  # [N, K, 3]
        return rasterization(means=means, quats=quats, scales=scales, opacities=opacities, colors=colors,
                             viewmats=torch.linalg.inv(camtoworlds), Ks=Ks, width=width, height=height)

    def train(self):
        camtoworlds = torch.eye(4)[None]
        Ks = torch.eye(3)[None]
        pixels = torch.rand(1, 4, 8, 3)
        exported = None
        for step in range(cfg.max_steps):
            renders, alphas, info = self.rasterize_splats(camtoworlds, Ks, width=8, height=4)
            loss = F.l1_loss(renders, pixels)
            loss.backward()

            if step in cfg.ply_steps and cfg.save_ply:
                sh0 = self.splats["sh0"]
                shN = self.splats["shN"]
                means = self.splats["means"]
                scales = self.splats["scales"]
                if cfg.use_hom_coords:
                    w_inv = 1.0 / torch.exp(self.splats["w"]).unsqueeze(1)
                    means *= w_inv  # <-- IPL003
                    scales = torch.log(torch.exp(scales) * w_inv)
                quats = self.splats["quats"]
                opacities = self.splats["opacities"]
                exported = export_splats(means=means, scales=scales, quats=quats, opacities=opacities,
                                         sh0=sh0, shN=shN, format="ply", save_to="point_cloud.ply")

            for optimizer in self.optimizers.values():
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
        return loss.detach(), exported["means"], self.splats["means"].detach().clone()


runner = Runner()
loss, exported_means, trained_means = runner.train()
