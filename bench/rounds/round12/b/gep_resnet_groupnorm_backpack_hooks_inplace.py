# label: hazard raises
# why: per-sample gradients are collected with full backward hooks on every module (BackPACK-style extend), so module outputs become hook views, and the residual block's ReLU(inplace=True) and out += identity then modify those views in place
# source: https://github.com/dayu11/Gradient-Embedding-Perturbation/issues/2 (fixed in commit fcb20d6fbb19d0755def0cbd56475b6969f344de)
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def conv3x3(in_planes, out_planes, stride=1):
    """3x3 convolution with padding"""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


gn_groups = 4


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super(BasicBlock, self).__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.gn1 = nn.GroupNorm(gn_groups, planes, affine=False)
        self.relu = nn.ReLU(inplace=True)  # <-- IPL001: in-place ReLU on GroupNorm outputs that the backward hooks wrap as views
        self.conv2 = conv3x3(planes, planes)
        self.gn2 = nn.GroupNorm(gn_groups, planes, affine=False)
        self.downsample = downsample

    def forward(self, x):
        identity = x

        out = self.conv1(x)
        out = self.gn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.gn2(out)

        if self.downsample is not None:
            identity = self.downsample(x)
            identity = torch.cat((identity, torch.zeros_like(identity)), 1)

        out += identity  # <-- IPL001: gn2's output is a hooked view; += mutates it in place
        out = self.relu(out)

        return out


class ResNet(nn.Module):

    def __init__(self, block, layers, num_classes=10):
        super(ResNet, self).__init__()
        self.num_layers = sum(layers)
        self.inplanes = 16
        self.conv1 = conv3x3(3, 16)
        self.gn1 = nn.GroupNorm(gn_groups, 16, affine=False)
        self.relu = nn.ReLU(inplace=True)  # <-- IPL001: in-place ReLU on the hooked stem GroupNorm output
        self.layer1 = self._make_layer(block, 16, layers[0])
        self.layer2 = self._make_layer(block, 32, layers[1], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(32, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                nn.init.normal_(m.weight, 0, math.sqrt(2. / n))

    def _make_layer(self, block, planes, blocks, stride=1):
        downsample = None
        if stride != 1:
            downsample = nn.Sequential(
                nn.AvgPool2d(1, stride=stride),
                nn.GroupNorm(gn_groups, self.inplanes, affine=False),
            )
        layers = []
        layers.append(block(self.inplanes, planes, stride, downsample))
        self.inplanes = planes
        for _ in range(1, blocks):
            layers.append(block(planes, planes))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.conv1(x)
        x = self.gn1(x)
        x = self.relu(x)
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.avgpool(x)
        x = x.view(x.size(0), -1)
        x = self.fc(x)
        return x


def extend(module):
    """Reduced BackPACK-style extension: store module inputs and attach per-sample gradient hooks."""
    def hook_store_io(mod, inp, out):
        mod.input0 = inp[0].detach()

    def hook_run_extensions(mod, g_inp, g_out):
        if isinstance(mod, nn.Linear):
            mod.weight.grad_batch = torch.einsum('no,ni->noi', g_out[0], mod.input0)
        elif isinstance(mod, nn.Conv2d):
            cols = F.unfold(mod.input0, mod.kernel_size, padding=mod.padding, stride=mod.stride)
            go = g_out[0].flatten(2)
            mod.weight.grad_batch = torch.einsum('nol,nkl->nok', go, cols).view(go.size(0), *mod.weight.shape)

    for m in module.modules():
        if len(list(m.children())) == 0:
            m.register_forward_hook(hook_store_io)
            m.register_full_backward_hook(hook_run_extensions)
    return module


net = extend(ResNet(BasicBlock, [1, 1], num_classes=10))
inputs = torch.randn(4, 3, 8, 8)
targets = torch.tensor([1, 3, 5, 7])
loss = F.cross_entropy(net(inputs), targets, reduction='sum')
loss.backward()
batch_grad_list = [p.grad_batch.reshape(p.grad_batch.shape[0], -1) for p in net.parameters() if hasattr(p, 'grad_batch')]
flat_batch_grads = torch.cat(batch_grad_list, dim=1)
