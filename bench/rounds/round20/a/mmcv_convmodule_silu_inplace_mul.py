# label: safe
# why: ConvModule defaults inplace=True, so the fallback SiLU computes inputs.mul_(torch.sigmoid(inputs)) on the BatchNorm output; BatchNorm's backward does not need its output and autograd keeps the original factor for the in-place mul_, so the gradients equal the out-of-place inputs * sigmoid(inputs).
# source: https://github.com/open-mmlab/mmcv/commit/21508e8203072126ca4014a09c53f13be49fc560 (fix inplace: SiLU.forward uses inputs.mul_(torch.sigmoid(inputs)))
import torch
import torch.nn as nn

torch.manual_seed(0)


class SiLU(nn.Module):
    """Sigmoid Weighted Liner Unit."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, inputs) -> torch.Tensor:
        if self.inplace:
            return inputs.mul_(torch.sigmoid(inputs))
        else:
            return inputs * torch.sigmoid(inputs)


ACTIVATION_LAYERS = {'SiLU': SiLU, 'ReLU': nn.ReLU}


def build_activation_layer(cfg):
    cfg = dict(cfg)
    return ACTIVATION_LAYERS[cfg.pop('type')](**cfg)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0,
                 act_cfg=dict(type='ReLU'), inplace=True, order=('conv', 'norm', 'act')):
        super().__init__()
        self.inplace = inplace
        self.order = order
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        act_cfg_ = act_cfg.copy()
        act_cfg_.setdefault('inplace', inplace)
        self.activate = build_activation_layer(act_cfg_)

    def forward(self, x, activate=True, norm=True):
        for layer in self.order:
            if layer == 'conv':
                x = self.conv(x)
            elif layer == 'norm' and norm:
                x = self.bn(x)
            elif layer == 'act' and activate:
                x = self.activate(x)
        return x


class CSPLayerStem(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = ConvModule(3, 8, 3, padding=1, act_cfg=dict(type='SiLU'))
        self.main_conv = ConvModule(8, 8, 1, act_cfg=dict(type='SiLU'))
        self.short_conv = ConvModule(8, 8, 1, act_cfg=dict(type='SiLU'))
        self.final_conv = ConvModule(16, 8, 1, act_cfg=dict(type='SiLU'))

    def forward(self, x):
        x = self.stem(x)
        x_short = self.short_conv(x)
        x_main = self.main_conv(x)
        return self.final_conv(torch.cat((x_main, x_short), dim=1))


def main():
    model = CSPLayerStem()
    imgs = torch.randn(2, 3, 8, 8)
    out = model(imgs)
    loss = out.pow(2).mean()
    loss.backward()
    return out.detach(), model.stem.conv.weight.grad


out, grad = main()
