# label: safe
# why: the Arcface head edits cos_theta_m (a fresh difference) in place and writes the margin logits into `output = cos_theta * 1.0`, a copy, so cos_theta, which pow() saved for backward, is never overwritten.
# source: https://github.com/TreB1eN/InsightFace_Pytorch/issues/6
import math

import torch
from torch.nn import BatchNorm1d, Conv2d, Linear, Module, Parameter, PReLU, Sequential

torch.manual_seed(0)


def l2_norm(input, axis=1):
    norm = torch.norm(input, 2, axis, True)
    output = torch.div(input, norm)
    return output


class Backbone(Module):
    def __init__(self, embedding_size=16):
        super(Backbone, self).__init__()
        self.input_layer = Sequential(Conv2d(3, 8, 3, 2, 1, bias=False), PReLU(8))
        self.output_layer = Sequential(torch.nn.Flatten(), Linear(8 * 4 * 4, embedding_size), BatchNorm1d(embedding_size))

    def forward(self, x):
        x = self.input_layer(x)
        x = self.output_layer(x)
        return l2_norm(x)


class Arcface(Module):
    # implementation of additive margin softmax loss in https://arxiv.org/abs/1801.05599
    def __init__(self, embedding_size=16, classnum=10, s=64.0, m=0.5):
        super(Arcface, self).__init__()
        self.classnum = classnum
        # initial kernel
        self.kernel = Parameter((torch.rand(embedding_size, classnum) * 2 - 1).renorm(2, 1, 1e-5).mul(1e5))
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


model = Backbone()
head = Arcface()
optimizer = torch.optim.SGD([{"params": model.parameters()}, {"params": [head.kernel], "weight_decay": 4e-4}], lr=0.01, momentum=0.9)
imgs = torch.randn(6, 3, 8, 8)
labels = torch.randint(0, 10, (6,))
embeddings = model(imgs)
thetas = head(embeddings, labels)
loss = torch.nn.CrossEntropyLoss()(thetas, labels)
optimizer.zero_grad()
loss.backward()
optimizer.step()
