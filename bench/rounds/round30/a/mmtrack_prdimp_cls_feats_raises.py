# label: hazard raises
# why: get_cls_feats computes scale_factor from cls_feats**2 (pow saves cls_feats for backward) and then rescales cls_feats in place with `*=`, so the PrDiMP training loss backpropagates through a pow whose saved input was overwritten.
# source: https://github.com/open-mmlab/mmtracking/commit/5aef9e77764e42cac16d1dd96eca496a0d2388ce
import math

import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)


class PrdimpClsHead(nn.Module):
    def __init__(self, in_dim=16, out_dim=8, filter_size=4):
        super().__init__()
        self.feat_norm_scale = math.sqrt(1.0 / (out_dim * filter_size * filter_size))
        self.channel_mapping = nn.Sequential(
            nn.Conv2d(in_dim, out_dim, kernel_size=3, padding=1, bias=False))
        self.filter = nn.Parameter(torch.randn(1, out_dim, filter_size, filter_size) * 0.1)

    def get_cls_feats(self, backbone_feats: Tensor) -> Tensor:
        """Get features for classification."""
        cls_feats = self.channel_mapping(backbone_feats)
        scale_factor = (torch.tensor(cls_feats.shape[1:]).prod() / (torch.sum(
            (cls_feats**2).view(cls_feats.shape[0], 1, 1, -1),
            dim=3,
            keepdim=True) + 1e-5)).sqrt()
        cls_feats *= self.feat_norm_scale * scale_factor  # <-- IPL001

        return cls_feats

    def classify(self, cls_feats: Tensor) -> Tensor:
        return nn.functional.conv2d(cls_feats, self.filter, padding=self.filter.shape[-1] // 2)

    def loss(self, backbone_feats: Tensor, target_heatmaps: Tensor) -> Tensor:
        cls_feats = self.get_cls_feats(backbone_feats)
        scores = self.classify(cls_feats)[..., :target_heatmaps.shape[-2], :target_heatmaps.shape[-1]]
        return ((scores - target_heatmaps) ** 2).mean()


def main():
    head = PrdimpClsHead()
    backbone_feats = torch.randn(2, 16, 9, 9, requires_grad=True)
    target_heatmaps = torch.rand(2, 1, 9, 9)
    loss_cls = head.loss(backbone_feats, target_heatmaps)
    loss_cls.backward()


main()
