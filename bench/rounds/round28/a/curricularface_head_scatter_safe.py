# label: safe
# why: the margin head overwrites cos_theta (the clamp output) twice in place, with a masked assignment and scatter_, but clamp saves only its input and every later op reads copies (advanced indexing), so no saved tensor is touched.
# source: https://github.com/cavalleria/cavaface/issues/10 (head/metrics.py CurricularFace)
import math

import torch
import torch.nn as nn
from torch.nn import Parameter

torch.manual_seed(0)


def l2_norm(input, axis=1):
    norm = torch.norm(input, 2, axis, True)
    output = torch.div(input, norm)
    return output


class CurricularFace(nn.Module):
    def __init__(self, in_features, out_features, m=0.5, s=64.):
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
        self.register_buffer('t', torch.zeros(1))
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


def main():
    backbone = nn.Sequential(nn.Linear(32, 16), nn.PReLU(), nn.Linear(16, 8))
    head = CurricularFace(8, 10)
    inputs = torch.randn(6, 32)
    labels = torch.tensor([0, 3, 3, 7, 9, 1])
    features = backbone(inputs)
    outputs, original_logits = head(features, labels)
    loss = nn.CrossEntropyLoss()(outputs, labels)
    loss.backward()
    return outputs.detach(), head.kernel.grad, backbone[0].weight.grad


outputs, kernel_grad, backbone_grad = main()
