# label: safe
# why: EDSR's ResBlock adds the skip in place to body(x).mul(res_scale); a multiply by a Python scalar saves nothing for backward, and the inplace ReLU inside the body only overwrites a conv output, so every saved tensor keeps its version.
# source: https://github.com/sanghyun-son/EDSR-PyTorch/blob/1abac010a9080ed3af0a621e5c4b1a822ec2a8a4/src/model/common.py
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def default_conv(in_channels, out_channels, kernel_size, bias=True):
    return nn.Conv2d(in_channels, out_channels, kernel_size, padding=(kernel_size // 2), bias=bias)


class ResBlock(nn.Module):
    def __init__(self, conv, n_feats, kernel_size, bias=True, bn=False, act=nn.ReLU(True), res_scale=1):
        super(ResBlock, self).__init__()
        m = []
        for i in range(2):
            m.append(conv(n_feats, n_feats, kernel_size, bias=bias))
            if bn:
                m.append(nn.BatchNorm2d(n_feats))
            if i == 0:
                m.append(act)
        self.body = nn.Sequential(*m)
        self.res_scale = res_scale

    def forward(self, x):
        res = self.body(x).mul(self.res_scale)
        res += x
        return res


class Upsampler(nn.Sequential):
    def __init__(self, conv, scale, n_feats, bias=True):
        m = []
        for _ in range(int(math.log(scale, 2))):
            m.append(conv(n_feats, 4 * n_feats, 3, bias))
            m.append(nn.PixelShuffle(2))
        super(Upsampler, self).__init__(*m)


class EDSR(nn.Module):
    def __init__(self, n_resblocks=4, n_feats=16, scale=2, res_scale=0.1, conv=default_conv):
        super(EDSR, self).__init__()
        kernel_size = 3
        act = nn.ReLU(True)
        self.head = nn.Sequential(conv(3, n_feats, kernel_size))
        m_body = [ResBlock(conv, n_feats, kernel_size, act=act, res_scale=res_scale) for _ in range(n_resblocks)]
        m_body.append(conv(n_feats, n_feats, kernel_size))
        self.body = nn.Sequential(*m_body)
        self.tail = nn.Sequential(Upsampler(conv, scale, n_feats), conv(n_feats, 3, kernel_size))

    def forward(self, x):
        x = self.head(x)
        res = self.body(x)
        res += x
        x = self.tail(res)
        return x


def main():
    model = EDSR()
    lr = torch.rand(2, 3, 12, 12)
    hr = torch.rand(2, 3, 24, 24)
    sr = model(lr)
    loss = F.l1_loss(sr, hr)
    loss.backward()
    return sr.detach(), model.head[0].weight.grad, model.body[0].body[0].weight.grad


sr_out, head_grad, body_grad = main()
