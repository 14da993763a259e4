# label: safe
# why: SimpleGatedConvModule multiplies the feature branch by the gate in place (x *= gate), but x is the fresh ELU output rather than the split view, and the in-place mul keeps the original x it needs for the gate's gradient, so DeepFill's gradients match the out-of-place version.
# source: https://github.com/open-mmlab/mmediting/commit/a58c9af94466a517723e974ccb1d56b6da3e8885
import copy

import torch
import torch.nn as nn

torch.manual_seed(0)


def build_activation_layer(cfg):
    if cfg['type'] == 'ELU':
        return nn.ELU()
    if cfg['type'] == 'Sigmoid':
        return nn.Sigmoid()
    raise KeyError(cfg['type'])


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0, act_cfg=None):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)

    def forward(self, x):
        return self.conv(x)


class SimpleGatedConvModule(nn.Module):
    """Simple Gated Convolutional Module: y = phi(conv1(x)) * sigma(conv2(x))."""

    def __init__(self, in_channels, out_channels, kernel_size, feat_act_cfg=dict(type='ELU'),
                 gate_act_cfg=dict(type='Sigmoid'), **kwargs):
        super(SimpleGatedConvModule, self).__init__()
        kwargs_ = copy.deepcopy(kwargs)
        kwargs_['act_cfg'] = None
        self.with_feat_act = feat_act_cfg is not None
        self.with_gate_act = gate_act_cfg is not None
        self.conv = ConvModule(in_channels, out_channels * 2, kernel_size, **kwargs_)
        if self.with_feat_act:
            self.feat_act = build_activation_layer(feat_act_cfg)
        if self.with_gate_act:
            self.gate_act = build_activation_layer(gate_act_cfg)

    def forward(self, x):
        x = self.conv(x)
        x, gate = torch.split(x, x.size(1) // 2, dim=1)
        if self.with_feat_act:
            x = self.feat_act(x)
        if self.with_gate_act:
            gate = self.gate_act(gate)
        x *= gate

        return x


class DeepFillEncoder(nn.Module):
    _conv_type = dict(conv=ConvModule, gated_conv=SimpleGatedConvModule)

    def __init__(self, in_channels=5, conv_type='gated_conv', channel_factor=0.25):
        super().__init__()
        conv_module = self._conv_type[conv_type]
        channels = [int(32 * channel_factor), int(64 * channel_factor)]
        self.enc1 = conv_module(in_channels, channels[0], kernel_size=5, padding=2)
        self.enc2 = conv_module(channels[0], channels[1], kernel_size=3, padding=1)

    def forward(self, x):
        x = self.enc1(x)
        x = self.enc2(x)
        return x


def main():
    encoder = DeepFillEncoder()
    masked_img = torch.rand(2, 3, 8, 8)
    mask = (torch.rand(2, 1, 8, 8) > 0.5).float()
    x = torch.cat([masked_img, torch.ones_like(mask), mask], dim=1)
    out = encoder(x)
    loss = out.abs().mean()
    loss.backward()
    return out.detach(), encoder.enc1.conv.conv.weight.grad, encoder.enc2.conv.conv.weight.grad


out, enc1_grad, enc2_grad = main()
