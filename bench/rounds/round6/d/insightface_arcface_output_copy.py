# label: safe no-twin
# why: ArcFace writes the margin logits into `output = cos_theta * 1.0`, an explicit copy, so cos_theta (saved by pow) is never touched; cos_theta_m and output are sub/mul results nobody saved, and the .data init of the kernel happens before any graph exists (no-twin: the automatic twin cannot rewrite the real `self.kernel.data.uniform_(...)` Parameter init; the forward rewritten out of place by hand gives identical loss and grads)
# source: https://github.com/TreB1eN/InsightFace_Pytorch/blob/master/model.py (Arcface head: "a little bit hacky way to prevent in_place operation on cos_theta")
import math

import torch
from torch.nn import BatchNorm1d, Linear, Module, Parameter

torch.manual_seed(0)


def l2_norm(input, axis=1):
    norm = torch.norm(input, 2, axis, True)
    output = torch.div(input, norm)
    return output


class Arcface(Module):
    # implementation of additive margin softmax loss in https://arxiv.org/abs/1801.05599
    def __init__(self, embedding_size=512, classnum=51332, s=64., m=0.5):
        super(Arcface, self).__init__()
        self.classnum = classnum
        self.kernel = Parameter(torch.Tensor(embedding_size, classnum))
        # initial kernel
        self.kernel.data.uniform_(-1, 1).renorm_(2, 1, 1e-5).mul_(1e5)
        self.m = m  # the margin value, default is 0.5
        self.s = s  # scalar value default is 64, see normface https://arxiv.org/abs/1704.06369
        self.cos_m = math.cos(m)
        self.sin_m = math.sin(m)
        self.mm = self.sin_m * m  # issue 1
        self.threshold = math.cos(math.pi - m)

    def forward(self, embbedings, label):
        # weights norm
        nB = len(embbedings)
        kernel_norm = l2_norm(self.kernel, axis=0)
        # cos(theta+m)
        cos_theta = torch.mm(embbedings, kernel_norm)
        cos_theta = cos_theta.clamp(-1, 1)  # for numerical stability
        cos_theta_2 = torch.pow(cos_theta, 2)
        sin_theta_2 = 1 - cos_theta_2
        sin_theta = torch.sqrt(sin_theta_2)
        cos_theta_m = (cos_theta * self.cos_m - sin_theta * self.sin_m)
        # this condition controls the theta+m should in range [0, pi]
        #      0<=theta+m<=pi
        #     -m<=theta<=pi-m
        cond_v = cos_theta - self.threshold
        cond_mask = cond_v <= 0
        keep_val = (cos_theta - self.mm)  # when theta not in [0,pi], use cosface instead
        cos_theta_m[cond_mask] = keep_val[cond_mask]
        output = cos_theta * 1.0  # a little bit hacky way to prevent in_place operation on cos_theta
        idx_ = torch.arange(0, nB, dtype=torch.long)
        output[idx_, label] = cos_theta_m[idx_, label]
        output *= self.s  # scale up in order to make softmax work, first introduced in normface
        return output


class Backbone(Module):
    def __init__(self, embedding_size):
        super().__init__()
        self.linear = Linear(10, embedding_size, bias=False)
        self.bn = BatchNorm1d(embedding_size)

    def forward(self, x):
        return l2_norm(self.bn(self.linear(x)))


model = Backbone(embedding_size=6)
head = Arcface(embedding_size=6, classnum=5)
optimizer = torch.optim.SGD(list(model.parameters()) + list(head.parameters()), lr=0.1, momentum=0.9)

imgs = torch.randn(8, 10)
labels = torch.tensor([0, 1, 2, 3, 4, 0, 1, 2])

embeddings = model(imgs)
thetas = head(embeddings, labels)
loss = torch.nn.functional.cross_entropy(thetas, labels)
optimizer.zero_grad()
loss.backward()
optimizer.step()
