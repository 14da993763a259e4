# label: hazard raises
# why: inside _inner_forward the RAFT BasicBlock applies the shared ReLU module before the residual sum and then adds identity into that ReLU output in place, although ReLU saved it for backward.
# source: https://github.com/open-mmlab/mmflow/pull/252 (commit 44a611ee50cd02a835fd9e3537856a600cafcc41)
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as cp

torch.manual_seed(0)


def build_norm_layer(cfg, num_features, postfix=""):
    if cfg["type"] == "IN":
        return "in" + str(postfix), nn.InstanceNorm2d(num_features)
    return "bn" + str(postfix), nn.BatchNorm2d(num_features)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, with_cp=False, norm_cfg=dict(type="IN"), act_cfg=dict(type="ReLU")):
        super(BasicBlock, self).__init__()
        self.norm1_name, norm1 = build_norm_layer(norm_cfg, planes, postfix=1)
        self.norm2_name, norm2 = build_norm_layer(norm_cfg, planes, postfix=2)
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=True)
        self.add_module(self.norm1_name, norm1)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=True)
        self.add_module(self.norm2_name, norm2)
        self.relu = nn.ReLU()
        self.downsample = downsample
        self.stride = stride
        self.with_cp = with_cp

    @property
    def norm1(self):
        return getattr(self, self.norm1_name)

    @property
    def norm2(self):
        return getattr(self, self.norm2_name)

    def forward(self, x):
        def _inner_forward(x):
            identity = x

            out = self.conv1(x)
            out = self.norm1(out)
            out = self.relu(out)

            out = self.conv2(out)
            out = self.norm2(out)
            out = self.relu(out)

            if self.downsample is not None:
                identity = self.downsample(x)

            out += identity  # <-- IPL001: out is the ReLU output saved for backward

            return out

        if self.with_cp and x.requires_grad:
            out = cp.checkpoint(_inner_forward, x, use_reentrant=False)
        else:
            out = _inner_forward(x)

        out = self.relu(out)
        return out


class RAFTEncoder(nn.Module):
    def __init__(self, in_channels=3, out_channels=8, norm_cfg=dict(type="IN")):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(in_channels, 4, 3, stride=2, padding=1), nn.InstanceNorm2d(4), nn.ReLU())
        self.inplanes = 4
        self.layer1 = self._make_layer(4, stride=1, norm_cfg=norm_cfg)
        self.layer2 = self._make_layer(8, stride=2, norm_cfg=norm_cfg)
        self.conv = nn.Conv2d(8, out_channels, 1)

    def _make_layer(self, planes, stride, norm_cfg):
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes, 1, stride=stride), nn.InstanceNorm2d(planes))
        layers = [BasicBlock(self.inplanes, planes, stride, downsample, norm_cfg=norm_cfg),
                  BasicBlock(planes, planes, 1, None, norm_cfg=norm_cfg)]
        self.inplanes = planes
        return nn.Sequential(*layers)

    def forward(self, x):
        return self.conv(self.layer2(self.layer1(self.stem(x))))


fnet = RAFTEncoder()
img1 = torch.randn(1, 3, 16, 16)
img2 = torch.roll(img1, shifts=1, dims=3)
feat = fnet(torch.cat([img1, img2], dim=0))
feat1, feat2 = torch.split(feat, [1, 1], dim=0)
corr = torch.einsum("bchw,bcuv->bhwuv", feat1, feat2) / feat.shape[1] ** 0.5
flow_logits = corr.flatten(3).max(dim=3)[0]
loss = F.softplus(-flow_logits).mean()
loss.backward()
