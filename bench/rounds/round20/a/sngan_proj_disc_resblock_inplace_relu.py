# label: hazard silent
# why: ProjDiscriminator hands act_cfg=dict(type='ReLU', inplace=True) to SNGANDiscResBlock, whose forward starts with out = self.activate(x); the in-place ReLU overwrites x, so forward_shortcut(x) reads the activated tensor instead of the pre-activation input and the residual sum is silently wrong.
# source: https://github.com/open-mmlab/mmgeneration/commit/283768f803121df741f252d056c068ff9b1d7d79 (remove inplace relu)
import torch
import torch.nn as nn

torch.manual_seed(0)


def build_activation_layer(cfg):
    cfg = dict(cfg)
    layer_type = cfg.pop('type')
    return {'ReLU': nn.ReLU}[layer_type](**cfg)


class SNGANDiscResBlock(nn.Module):
    def __init__(self, in_channels, out_channels, downsample=False, act_cfg=dict(type='ReLU')):
        super().__init__()
        self.with_downsample = downsample
        self.activate = build_activation_layer(act_cfg)
        self.conv_1 = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.conv_2 = nn.Conv2d(out_channels, out_channels, 3, padding=1)
        if self.with_downsample:
            self.downsample = nn.AvgPool2d(2, 2)
        self.learnable_sc = in_channels != out_channels or downsample
        if self.learnable_sc:
            self.shortcut = nn.Conv2d(in_channels, out_channels, 1)

    def forward(self, x):
        out = self.activate(x)  # <-- IPL002
        out = self.conv_1(out)
        out = self.activate(out)
        out = self.conv_2(out)
        if self.with_downsample:
            out = self.downsample(out)
        shortcut = self.forward_shortcut(x)
        return out + shortcut

    def forward_shortcut(self, x):
        out = x
        if self.learnable_sc:
            out = self.shortcut(out)
            if self.with_downsample:
                out = self.downsample(out)
        return out


class ProjDiscriminator(nn.Module):
    def __init__(self, act_cfg=dict(type='ReLU', inplace=True)):
        super().__init__()
        self.blocks_cfg = dict(act_cfg=act_cfg)
        self.from_rgb = nn.Conv2d(3, 4, 3, padding=1)
        self.conv_blocks = nn.ModuleList([
            SNGANDiscResBlock(4, 8, downsample=True, **self.blocks_cfg),
            SNGANDiscResBlock(8, 8, downsample=False, **self.blocks_cfg),
        ])
        self.activate = build_activation_layer(act_cfg)
        self.decision = nn.Linear(8, 1)

    def forward(self, x, label=None):
        h = self.from_rgb(x)
        for conv_block in self.conv_blocks:
            h = conv_block(h)
        h = self.activate(h)
        h = torch.sum(h, dim=[2, 3])
        return self.decision(h)


def main():
    disc = ProjDiscriminator()
    imgs = torch.randn(2, 3, 8, 8)
    score = disc(imgs)
    loss = nn.functional.softplus(-score).mean()
    loss.backward()
    return score.detach(), disc.from_rgb.weight.grad


score, grad = main()
