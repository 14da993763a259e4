# label: safe
# why: the merged fix writes the bottom-up sum out of place, so every saved ReLU output of fpn_convs stays untouched.
# source: https://github.com/open-mmlab/mmdetection/pull/9450
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

ACTIVATIONS = {'ReLU': nn.ReLU, 'LeakyReLU': nn.LeakyReLU}


def build_activation_layer(cfg):
    cfg_ = cfg.copy()
    layer_type = cfg_.pop('type')
    return ACTIVATIONS[layer_type](**cfg_)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, act_cfg=dict(type='ReLU'), inplace=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.with_activation = act_cfg is not None
        if self.with_activation:
            act_cfg_ = act_cfg.copy()
            act_cfg_.setdefault('inplace', inplace)
            self.activate = build_activation_layer(act_cfg_)

    def forward(self, x):
        x = self.conv(x)
        if self.with_activation:
            x = self.activate(x)
        return x


class PAFPN(nn.Module):
    def __init__(self, in_channels, out_channels, act_cfg=None):
        super().__init__()
        self.in_channels = in_channels
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        self.downsample_convs = nn.ModuleList()
        self.pafpn_convs = nn.ModuleList()
        for i in range(len(in_channels)):
            self.lateral_convs.append(ConvModule(in_channels[i], out_channels, 1, act_cfg=act_cfg, inplace=False))
            self.fpn_convs.append(ConvModule(out_channels, out_channels, 3, padding=1, act_cfg=act_cfg, inplace=False))
        for i in range(len(in_channels) - 1):
            self.downsample_convs.append(ConvModule(out_channels, out_channels, 3, stride=2, padding=1, act_cfg=act_cfg, inplace=False))
            self.pafpn_convs.append(ConvModule(out_channels, out_channels, 3, padding=1, act_cfg=act_cfg, inplace=False))

    def forward(self, inputs):
        assert len(inputs) == len(self.in_channels)
        laterals = [lateral_conv(inputs[i]) for i, lateral_conv in enumerate(self.lateral_convs)]

        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] = laterals[i - 1] + F.interpolate(laterals[i], size=prev_shape, mode='nearest')

        inter_outs = [self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels)]

        for i in range(0, used_backbone_levels - 1):
            inter_outs[i + 1] = inter_outs[i + 1] + self.downsample_convs[i](inter_outs[i])

        outs = []
        outs.append(inter_outs[0])
        outs.extend([self.pafpn_convs[i - 1](inter_outs[i]) for i in range(1, used_backbone_levels)])
        return tuple(outs)


neck = PAFPN([4, 8, 16], 4, act_cfg=dict(type='ReLU'))
feats = [torch.randn(1, 4, 16, 16), torch.randn(1, 8, 8, 8), torch.randn(1, 16, 4, 4)]
outs = neck(feats)
loss = sum(o.mean() for o in outs)
loss.backward()
