# label: safe
# why: every LeakyReLU(0.1, inplace=True) in the Darknet blocks overwrites a fresh BatchNorm (or bias-conv) output that no backward node saved, and route/shortcut layers only read the activated tensors, so the later removal of inplace=True changed nothing numerically.
# source: https://github.com/eriklindernoren/PyTorch-YOLOv3/commit/7fffa98b9166a03b4a53fb40202d97b09e8e9036 (pre-change models.py create_modules)
import torch
import torch.nn as nn

torch.manual_seed(0)


class EmptyLayer(nn.Module):
    """Placeholder for 'route' and 'shortcut' layers"""

    def __init__(self):
        super(EmptyLayer, self).__init__()


def create_modules(module_defs):
    hyperparams = module_defs.pop(0)
    output_filters = [int(hyperparams['channels'])]
    module_list = nn.ModuleList()
    for i, module_def in enumerate(module_defs):
        modules = nn.Sequential()
        if module_def['type'] == 'convolutional':
            bn = int(module_def['batch_normalize'])
            filters = int(module_def['filters'])
            kernel_size = int(module_def['size'])
            pad = (kernel_size - 1) // 2 if int(module_def['pad']) else 0
            modules.add_module('conv_%d' % i, nn.Conv2d(in_channels=output_filters[-1],
                                                        out_channels=filters,
                                                        kernel_size=kernel_size,
                                                        stride=int(module_def['stride']),
                                                        padding=pad,
                                                        bias=not bn))
            if bn:
                modules.add_module('batch_norm_%d' % i, nn.BatchNorm2d(filters))
            if module_def['activation'] == 'leaky':
                modules.add_module('leaky_%d' % i, nn.LeakyReLU(0.1, inplace=True))
        elif module_def['type'] == 'upsample':
            upsample = nn.Upsample(scale_factor=int(module_def['stride']), mode='bilinear', align_corners=True)
            modules.add_module('upsample_%d' % i, upsample)
        elif module_def['type'] == 'route':
            layers = [int(x) for x in module_def["layers"].split(',')]
            filters = sum([output_filters[layer_i] for layer_i in layers])
            modules.add_module('route_%d' % i, EmptyLayer())
        elif module_def['type'] == 'shortcut':
            filters = output_filters[int(module_def['from'])]
            modules.add_module("shortcut_%d" % i, EmptyLayer())
        module_list.append(modules)
        output_filters.append(filters)
    return hyperparams, module_list


MODULE_DEFS = [
    {'type': 'net', 'channels': '3'},
    {'type': 'convolutional', 'batch_normalize': '1', 'filters': '8', 'size': '3', 'stride': '1', 'pad': '1', 'activation': 'leaky'},
    {'type': 'convolutional', 'batch_normalize': '1', 'filters': '16', 'size': '3', 'stride': '2', 'pad': '1', 'activation': 'leaky'},
    {'type': 'convolutional', 'batch_normalize': '1', 'filters': '8', 'size': '1', 'stride': '1', 'pad': '1', 'activation': 'leaky'},
    {'type': 'convolutional', 'batch_normalize': '1', 'filters': '16', 'size': '3', 'stride': '1', 'pad': '1', 'activation': 'leaky'},
    {'type': 'shortcut', 'from': '-3', 'activation': 'linear'},
    {'type': 'convolutional', 'batch_normalize': '1', 'filters': '8', 'size': '1', 'stride': '1', 'pad': '1', 'activation': 'leaky'},
    {'type': 'upsample', 'stride': '2'},
    {'type': 'route', 'layers': '-1,-7'},
    {'type': 'convolutional', 'batch_normalize': '0', 'filters': '18', 'size': '1', 'stride': '1', 'pad': '1', 'activation': 'linear'},
]


class Darknet(nn.Module):
    def __init__(self, module_defs):
        super(Darknet, self).__init__()
        self.module_defs = [dict(d) for d in module_defs]
        self.hyperparams, self.module_list = create_modules(self.module_defs)

    def forward(self, x):
        outputs = []
        for i, (module_def, module) in enumerate(zip(self.module_defs, self.module_list)):
            if module_def['type'] in ['convolutional', 'upsample']:
                x = module(x)
            elif module_def['type'] == 'route':
                layer_i = [int(x) for x in module_def['layers'].split(',')]
                x = torch.cat([outputs[i] for i in layer_i], 1)
            elif module_def['type'] == 'shortcut':
                layer_i = int(module_def['from'])
                x = outputs[-1] + outputs[layer_i]
            outputs.append(x)
        return x


def main():
    model = Darknet(MODULE_DEFS)
    imgs = torch.randn(2, 3, 16, 16)
    prediction = model(imgs)
    x = torch.sigmoid(prediction[:, 0])
    y = torch.sigmoid(prediction[:, 1])
    conf = torch.sigmoid(prediction[:, 4])
    loss = (x - 0.5).pow(2).sum() + (y - 0.5).pow(2).sum() + nn.functional.binary_cross_entropy(conf, torch.zeros_like(conf))
    loss.backward()
    return loss.detach(), model.module_list[0][0].weight.grad.clone()


loss, grad = main()
