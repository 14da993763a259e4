# label: hazard raises
# why: full backward hooks on every BiFPN submodule wrap each FpnCombine output in a view-returning hook Function, and the after_combine block's act_layer(inplace=True) then rewrites that view in place, which autograd forbids
# source: https://github.com/rwightman/efficientdet-pytorch/issues/298
from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SeparableConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3):
        super().__init__()
        self.conv_dw = nn.Conv2d(in_channels, in_channels, kernel_size, padding=kernel_size // 2, groups=in_channels, bias=False)
        self.conv_pw = nn.Conv2d(in_channels, out_channels, 1, bias=True)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        return self.bn(self.conv_pw(self.conv_dw(x)))


class FpnCombine(nn.Module):
    def __init__(self, inputs_offsets, output_size, input_sizes, weight_method='fastattn'):
        super(FpnCombine, self).__init__()
        self.inputs_offsets = inputs_offsets
        self.weight_method = weight_method
        self.output_size = output_size
        self.input_sizes = input_sizes
        self.edge_weights = nn.Parameter(torch.ones(len(inputs_offsets)), requires_grad=True)

    def resample(self, x, offset):
        if self.input_sizes[offset] > self.output_size:
            return F.max_pool2d(x, kernel_size=self.input_sizes[offset] // self.output_size)
        if self.input_sizes[offset] < self.output_size:
            return F.interpolate(x, scale_factor=self.output_size // self.input_sizes[offset], mode='nearest')
        return x

    def forward(self, x: List[torch.Tensor]):
        dtype = x[0].dtype
        nodes = []
        for offset in self.inputs_offsets:
            nodes.append(self.resample(x[offset], offset))
        if self.weight_method == 'attn':
            normalized_weights = torch.softmax(self.edge_weights.to(dtype=dtype), dim=0)
            out = torch.stack(nodes, dim=-1) * normalized_weights
        elif self.weight_method == 'fastattn':
            edge_weights = nn.functional.relu(self.edge_weights.to(dtype=dtype))
            weights_sum = torch.sum(edge_weights)
            out = torch.stack(
                [(nodes[i] * edge_weights[i]) / (weights_sum + 0.0001) for i in range(len(nodes))], dim=-1)
        else:
            out = torch.stack(nodes, dim=-1)
        out = torch.sum(out, dim=-1)
        return out


class Fnode(nn.Module):
    """ A simple wrapper used in place of nn.Sequential for torchscript typing
    Handles input type List[Tensor] -> output type Tensor
    """

    def __init__(self, combine: nn.Module, after_combine: nn.Module):
        super(Fnode, self).__init__()
        self.combine = combine
        self.after_combine = after_combine

    def forward(self, x: List[torch.Tensor]) -> torch.Tensor:
        return self.after_combine(self.combine(x))


class BiFpnLayer(nn.Module):
    def __init__(self, fpn_channels=8, num_levels=3, act_layer=nn.ReLU6, pre_act=True):
        super(BiFpnLayer, self).__init__()
        self.num_levels = num_levels
        sizes = [8, 4, 2]
        # top-down then bottom-up nodes: (output size, input offsets)
        nodes = [(4, [1, 2]), (8, [0, 3]), (4, [1, 3, 4]), (2, [2, 5])]
        node_sizes = list(sizes)
        self.fnode = nn.ModuleList()
        for output_size, inputs_offsets in nodes:
            combine = FpnCombine(inputs_offsets, output_size, list(node_sizes))
            after_combine = nn.Sequential()
            if pre_act:
                after_combine.add_module('act', act_layer(inplace=True))  # <-- IPL001: modifies in place the combine output that the backward hook returned as a view
            after_combine.add_module('conv', SeparableConv2d(fpn_channels, fpn_channels))
            self.fnode.append(Fnode(combine=combine, after_combine=after_combine))
            node_sizes.append(output_size)

    def forward(self, x: List[torch.Tensor]):
        for fn in self.fnode:
            x.append(fn(x))
        return x[-self.num_levels::]


class BiFpn(nn.Module):
    def __init__(self, num_layers=2):
        super().__init__()
        self.cell = nn.Sequential(*[BiFpnLayer() for _ in range(num_layers)])

    def forward(self, x: List[torch.Tensor]):
        for layer in self.cell:
            x = layer(list(x))
        return x


gradient_norms = {}


def make_hook(name):
    def hook(module, grad_input, grad_output):
        gradient_norms[name] = grad_output[0].norm().item()
    return hook


fpn = BiFpn()
for name, module in fpn.named_modules():
    if isinstance(module, (FpnCombine, SeparableConv2d)):
        module.register_full_backward_hook(make_hook(name))

features = [torch.randn(1, 8, 8, 8), torch.randn(1, 8, 4, 4), torch.randn(1, 8, 2, 2)]
outs = fpn(features)
loss = sum(o.pow(2).mean() for o in outs)
loss.backward()
