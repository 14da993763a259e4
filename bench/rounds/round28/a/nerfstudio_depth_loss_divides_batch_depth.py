# label: hazard silent
# why: depth_loss divides termination_depth by directions_norm in place, but termination_depth is batch["depth_image"].to(device), the batch tensor itself on the same device, so every proposal level and the gt-depth visualization read an already (repeatedly) rescaled depth image.
# source: https://github.com/nerfstudio-project/nerfstudio/commit/6c16d7b430f0b8d199247c4210419461e54dfb55 (pre-fix nerfstudio/model_components/losses.py depth_loss with the DepthNerfactoModel callers of that commit)
from dataclasses import dataclass

import torch
import torch.nn as nn

torch.manual_seed(0)
EPS = 1.0e-7


@dataclass
class Frustums:
    starts: torch.Tensor
    ends: torch.Tensor


@dataclass
class RaySamples:
    frustums: Frustums


def ds_nerf_depth_loss(weights, termination_depth, steps, lengths, sigma):
    depth_mask = termination_depth > 0
    loss = -torch.log(weights + EPS) * torch.exp(-((steps - termination_depth[:, None]) ** 2) / (2 * sigma)) * lengths
    loss = loss.sum(-2) * depth_mask
    return torch.mean(loss)


def depth_loss(weights, ray_samples, termination_depth, predicted_depth, sigma, directions_norm, is_euclidean):
    if not is_euclidean:
        termination_depth /= directions_norm  # <-- IPL004
    steps = (ray_samples.frustums.starts + ray_samples.frustums.ends) / 2
    lengths = (ray_samples.frustums.ends - ray_samples.frustums.starts) / 2
    loss = ds_nerf_depth_loss(weights, termination_depth, steps, lengths, sigma)
    return torch.mean(loss)


class DepthNerfactoModel(nn.Module):
    def __init__(self, num_proposal_levels=2, num_samples=8):
        super().__init__()
        self.device = torch.device("cpu")
        self.is_euclidean_depth = False
        self.depth_sigma = torch.tensor([0.05])
        self.fields = nn.ModuleList([nn.Linear(4, 1) for _ in range(num_proposal_levels)])
        self.num_samples = num_samples

    def get_outputs(self, origins, directions):
        directions_norm = directions.norm(dim=-1, keepdim=True)
        starts = torch.linspace(0.5, 4.0, self.num_samples)[None, :, None].expand(origins.shape[0], -1, 1)
        ends = starts + 3.5 / self.num_samples
        weights_list, ray_samples_list = [], []
        for field in self.fields:
            mid = (starts + ends) / 2
            positions = origins[:, None, :] + directions[:, None, :] * mid
            density = torch.relu(field(torch.cat([positions, mid], -1)))
            alphas = 1 - torch.exp(-density * (ends - starts))
            trans = torch.cumprod(torch.cat([torch.ones_like(alphas[:, :1]), 1 - alphas[:, :-1] + EPS], 1), 1)
            weights_list.append(alphas * trans)
            ray_samples_list.append(RaySamples(Frustums(starts, ends)))
        depth = (weights_list[-1] * (starts + ends) / 2).sum(-2)
        return {"weights_list": weights_list, "ray_samples_list": ray_samples_list, "depth": depth,
                "directions_norm": directions_norm}

    def get_metrics_dict(self, outputs, batch):
        metrics_dict = {}
        metrics_dict["depth_loss"] = 0.0
        sigma = self.depth_sigma.to(self.device)
        for i in range(len(outputs["weights_list"])):
            metrics_dict["depth_loss"] += depth_loss(
                weights=outputs["weights_list"][i],
                ray_samples=outputs["ray_samples_list"][i],
                termination_depth=batch["depth_image"].to(self.device),
                predicted_depth=outputs["depth"],
                sigma=sigma,
                directions_norm=outputs["directions_norm"],
                is_euclidean=self.is_euclidean_depth,
            ) / len(outputs["weights_list"])
        return metrics_dict

    def get_image_metrics_and_images(self, outputs, batch):
        ground_truth_depth = batch["depth_image"]
        if not self.is_euclidean_depth:
            ground_truth_depth = ground_truth_depth / outputs["directions_norm"]
        return torch.cat([ground_truth_depth, outputs["depth"]], dim=1)


def main():
    model = DepthNerfactoModel()
    origins = torch.zeros(16, 3)
    directions = torch.randn(16, 3)
    directions = directions / directions.norm(dim=-1, keepdim=True) * (1.0 + torch.rand(16, 1))
    batch = {"depth_image": 1.0 + 2.0 * torch.rand(16, 1)}
    outputs = model.get_outputs(origins, directions)
    metrics_dict = model.get_metrics_dict(outputs, batch)
    metrics_dict["depth_loss"].backward()
    images = model.get_image_metrics_and_images(outputs, batch)
    return metrics_dict["depth_loss"].detach(), images.detach(), model.fields[0].weight.grad


depth_loss_value, depth_images, field_grad = main()
