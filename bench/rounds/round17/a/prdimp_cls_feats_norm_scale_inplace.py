# label: hazard raises
# why: get_cls_feats computes scale_factor from cls_feats**2, which saves cls_feats for backward, and then rescales cls_feats with *= in place, so training the classification head fails in backward
# source: https://github.com/open-mmlab/mmtracking/commit/cdc10d76 ("[Feature] Support the train of PrDiMP (#660)", mmtrack/models/track_heads/prdimp_cls_head.py)
import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

torch.manual_seed(0)


class FilterInitializer(nn.Module):
    """Pools the template features inside the target box into a filter."""

    def __init__(self, feat_dim, filter_size=3):
        super().__init__()
        self.filter_size = filter_size
        self.filter_conv = nn.Conv2d(feat_dim, feat_dim, kernel_size=3, padding=1)

    def forward(self, feats: Tensor, target_bboxes: Tensor) -> Tensor:
        feats = self.filter_conv(feats)
        filters = []
        for feat, (cx, cy, w, h) in zip(feats, target_bboxes.tolist()):
            x0, y0 = int(cx - w / 2), int(cy - h / 2)
            roi = feat[:, y0:y0 + int(h), x0:x0 + int(w)]
            filters.append(F.adaptive_avg_pool2d(roi, self.filter_size))
        return torch.stack(filters).mean(0, keepdim=True)


class PrDiMPClsHead(nn.Module):
    def __init__(self, in_dim=8, out_dim=4, filter_size=3):
        super().__init__()
        self.filter_initializer = FilterInitializer(out_dim, filter_size)
        self.feat_norm_scale = math.sqrt(1.0 / (out_dim * filter_size * filter_size))
        self.channel_mapping = nn.Sequential(
            nn.Conv2d(in_dim, out_dim, kernel_size=3, padding=1, bias=False))
        self.filter_size = torch.tensor([filter_size, filter_size], dtype=torch.float32)

    def init_weights(self):
        for m in self.channel_mapping:
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                nn.init.normal_(m.weight, 0, math.sqrt(2. / n))

    def get_cls_feats(self, backbone_feats: Tensor) -> Tensor:
        cls_feats = self.channel_mapping(backbone_feats)
        scale_factor = (torch.tensor(cls_feats.shape[1:]).prod() / (torch.sum(
            (cls_feats**2).view(cls_feats.shape[0], 1, 1, -1),
            dim=3,
            keepdim=True) + 1e-5)).sqrt()
        cls_feats *= self.feat_norm_scale * scale_factor  # <-- IPL001: cls_feats was saved by cls_feats**2 above

        return cls_feats

    def forward(self, template_feats, search_feats, target_bboxes):
        template_cls_feats = self.get_cls_feats(template_feats)
        search_cls_feats = self.get_cls_feats(search_feats)
        cls_filter = self.filter_initializer(template_cls_feats, target_bboxes)
        pad = int(self.filter_size[0].item()) // 2
        return F.conv2d(search_cls_feats, cls_filter, padding=pad)

    def loss(self, template_feats, search_feats, target_bboxes, gauss_label):
        scores = self.forward(template_feats, search_feats, target_bboxes)
        return F.mse_loss(scores, gauss_label)


head = PrDiMPClsHead()
head.init_weights()
template_feats = torch.randn(2, 8, 9, 9)
search_feats = torch.randn(2, 8, 9, 9)
target_bboxes = torch.tensor([[4.5, 4.5, 4.0, 4.0], [4.0, 5.0, 5.0, 3.0]])
ys, xs = torch.meshgrid(torch.arange(9.), torch.arange(9.), indexing="ij")
gauss_label = torch.exp(-((xs - 4.5) ** 2 + (ys - 4.5) ** 2) / 4.0).expand(2, 1, 9, 9)
loss_cls = head.loss(template_feats, search_feats, target_bboxes, gauss_label)
loss_cls.backward()
