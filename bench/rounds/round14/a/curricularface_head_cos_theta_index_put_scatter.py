# label: safe
# why: the head writes the hard-example and target logits into cos_theta in place, but nothing saved cos_theta itself (clamp keeps its input, the boolean and advanced indexing keep only indices), so current PyTorch backpropagates the same gradients as the out-of-place torch.where rewrite suggested in the issue.
# source: https://github.com/HuangYG123/CurricularFace/issues/2 (head/metrics.py @ d3802651f9672ae4ac0d09235c292252ba53a364)
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import Parameter

torch.manual_seed(0)


def l2_norm(input, axis=1):
    norm = torch.norm(input, 2, axis, True)
    output = torch.div(input, norm)
    return output


class CurricularFace(nn.Module):
    def __init__(self, in_features, out_features, m=0.5, s=64.0):
        super(CurricularFace, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.m = m
        self.s = s
        self.cos_m = math.cos(m)
        self.sin_m = math.sin(m)
        self.threshold = math.cos(math.pi - m)
        self.mm = math.sin(math.pi - m) * m
        self.kernel = Parameter(torch.Tensor(in_features, out_features))
        self.register_buffer("t", torch.zeros(1))
        nn.init.normal_(self.kernel, std=0.01)

    def forward(self, embbedings, label):
        embbedings = l2_norm(embbedings, axis=1)
        kernel_norm = l2_norm(self.kernel, axis=0)
        cos_theta = torch.mm(embbedings, kernel_norm)
        cos_theta = cos_theta.clamp(-1, 1)  # for numerical stability
        with torch.no_grad():
            origin_cos = cos_theta.clone()
        target_logit = cos_theta[torch.arange(0, embbedings.size(0)), label].view(-1, 1)

        sin_theta = torch.sqrt(1.0 - torch.pow(target_logit, 2))
        cos_theta_m = target_logit * self.cos_m - sin_theta * self.sin_m  # cos(target+margin)
        mask = cos_theta > cos_theta_m
        final_target_logit = torch.where(target_logit > self.threshold, cos_theta_m, target_logit - self.mm)

        hard_example = cos_theta[mask]
        with torch.no_grad():
            self.t = target_logit.mean() * 0.01 + (1 - 0.01) * self.t
        cos_theta[mask] = hard_example * (self.t + hard_example)
        cos_theta.scatter_(1, label.view(-1, 1).long(), final_target_logit)
        output = cos_theta * self.s
        return output, origin_cos * self.s


class Backbone(nn.Module):
    def __init__(self, embedding_size=8):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.PReLU(4), nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.output_layer = nn.Sequential(nn.Linear(16, embedding_size), nn.BatchNorm1d(embedding_size))

    def forward(self, x):
        return self.output_layer(self.body(x))


backbone = Backbone()
head = CurricularFace(in_features=8, out_features=5, s=16.0)
optimizer = torch.optim.SGD([{"params": backbone.parameters()}, {"params": head.parameters()}], lr=0.1, momentum=0.9)
inputs = torch.randn(6, 3, 8, 8)
labels = torch.tensor([0, 1, 2, 3, 4, 0])
for _ in range(2):
    features = backbone(inputs)
    outputs, original_logits = head(features, labels)
    loss = F.cross_entropy(outputs, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
final_loss = loss.detach()
