# label: hazard raises
# why: the in-place Mish `x.mul_(F.softplus(x).tanh())` overwrites x, which softplus just saved as its input for backward
# source: https://github.com/rwightman/gen-efficientnet-pytorch/issues/16 (Mish from ultralytics/yolov3 models.py quoted there; geffnet dropped its in-place variant for this error)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Mish(nn.Module):  # https://github.com/digantamisra98/Mish
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.mul_(F.softplus(x).tanh())  # <-- IPL001: x was saved by softplus for backward


def create_modules(module_defs):
    module_list = nn.ModuleList()
    output_filters = [3]
    for mdef in module_defs:
        modules = nn.Sequential()
        if mdef['type'] == 'convolutional':
            bn = mdef['batch_normalize']
            filters = mdef['filters']
            size = mdef['size']
            stride = mdef['stride']
            modules.add_module('Conv2d', nn.Conv2d(in_channels=output_filters[-1],
                                                   out_channels=filters,
                                                   kernel_size=size,
                                                   stride=stride,
                                                   padding=(size - 1) // 2 if mdef['pad'] else 0,
                                                   bias=not bn))
            if bn:
                modules.add_module('BatchNorm2d', nn.BatchNorm2d(filters, momentum=0.1))
            if mdef['activation'] == 'leaky':
                modules.add_module('activation', nn.LeakyReLU(0.1, inplace=True))
            elif mdef['activation'] == 'mish':
                modules.add_module('activation', Mish())
        module_list.append(modules)
        output_filters.append(filters)
    return module_list


module_defs = [
    dict(type='convolutional', batch_normalize=1, filters=8, size=3, stride=1, pad=1, activation='mish'),
    dict(type='convolutional', batch_normalize=1, filters=8, size=3, stride=2, pad=1, activation='leaky'),
    dict(type='convolutional', batch_normalize=0, filters=6, size=1, stride=1, pad=1, activation='linear'),
]
module_list = create_modules(module_defs)
x = torch.randn(2, 3, 8, 8)
for module in module_list:
    x = module(x)
loss = x.pow(2).mean()
loss.backward()
