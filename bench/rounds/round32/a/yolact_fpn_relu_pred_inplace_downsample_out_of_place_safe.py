# label: safe
# why: YOLACT's FPN applies F.relu(..., inplace=True) to each pred_layer conv output (a conv does not save its output), and the commit moved the downsample ReLUs after the loop that chains the stride-2 convs, using inplace=False there because each downsampled map is the saved input of the next downsample conv.
# source: https://github.com/dbolya/yolact/commit/b31107ccfaf4fbe815f452b4763d768d6f55dc8d
import torch
import torch.nn as nn
import torch.nn.functional as F
from typing import List


class Config(object):
    def __init__(self, config_dict):
        for key, val in config_dict.items():
            self.__setattr__(key, val)


cfg = Config({
    'fpn': Config({
        'num_features': 8,
        'interpolation_mode': 'bilinear',
        'num_downsample': 2,
        'use_conv_downsample': True,
        'pad': True,
        'relu_downsample_layers': True,
        'relu_pred_layers': True,
    }),
})


class FPN(nn.Module):
    """
    Implements a general version of the FPN introduced in
    https://arxiv.org/pdf/1612.03144.pdf
    """
    def __init__(self, in_channels):
        super().__init__()

        self.lat_layers = nn.ModuleList([
            nn.Conv2d(x, cfg.fpn.num_features, kernel_size=1)
            for x in reversed(in_channels)
        ])

        # This is here for backwards compatability
        padding = 1 if cfg.fpn.pad else 0
        self.pred_layers = nn.ModuleList([
            nn.Conv2d(cfg.fpn.num_features, cfg.fpn.num_features, kernel_size=3, padding=padding)
            for _ in in_channels
        ])

        if cfg.fpn.use_conv_downsample:
            self.downsample_layers = nn.ModuleList([
                nn.Conv2d(cfg.fpn.num_features, cfg.fpn.num_features, kernel_size=3, padding=1, stride=2)
                for _ in range(cfg.fpn.num_downsample)
            ])

        self.interpolation_mode = cfg.fpn.interpolation_mode
        self.num_downsample = cfg.fpn.num_downsample
        self.use_conv_downsample = cfg.fpn.use_conv_downsample
        self.relu_downsample_layers = cfg.fpn.relu_downsample_layers
        self.relu_pred_layers = cfg.fpn.relu_pred_layers

    def forward(self, convouts: List[torch.Tensor]):
        out = []
        x = torch.zeros(1, device=convouts[0].device)
        for i in range(len(convouts)):
            out.append(x)

        j = len(convouts)
        for lat_layer in self.lat_layers:
            j -= 1

            if j < len(convouts) - 1:
                _, _, h, w = convouts[j].size()
                x = F.interpolate(x, size=(h, w), mode=self.interpolation_mode, align_corners=False)

            x = x + lat_layer(convouts[j])
            out[j] = x

        # This janky second loop is here because TorchScript.
        j = len(convouts)
        for pred_layer in self.pred_layers:
            j -= 1
            out[j] = pred_layer(out[j])

            if self.relu_pred_layers:
                F.relu(out[j], inplace=True)

        cur_idx = len(out)

        # In the original paper, this takes care of P6
        if self.use_conv_downsample:
            for downsample_layer in self.downsample_layers:
                out.append(downsample_layer(out[-1]))
        else:
            for idx in range(self.num_downsample):
                out.append(nn.functional.max_pool2d(out[-1], 1, stride=2))

        if self.relu_downsample_layers:
            for idx in range(cur_idx, len(out)):
                out[idx] = F.relu(out[idx], inplace=False)

        return out


def main():
    torch.manual_seed(0)
    in_channels = [4, 6, 8]
    fpn = FPN(in_channels)
    convouts = [torch.randn(2, 4, 16, 16), torch.randn(2, 6, 8, 8), torch.randn(2, 8, 4, 4)]
    outs = fpn(convouts)
    loss = sum((o * (k + 1)).sum() for k, o in enumerate(outs))
    loss.backward()
    print('loss', loss.item())
    print('lat grad', fpn.lat_layers[0].weight.grad.abs().sum().item())
    print('down grad', fpn.downsample_layers[0].weight.grad.abs().sum().item())
    return outs, loss, fpn.lat_layers[0].weight.grad, fpn.downsample_layers[0].weight.grad


outs, loss, lat_grad, down_grad = main()
