# label: safe
# why: the fix in the same commit builds the dropout only when dropout > 0 and adds the shortcut out of place (out = out + res), so the ReLU output saved for backward is never overwritten.
# source: https://github.com/open-mmlab/mmpose/commit/e5975bf4ddb625446106cd05e3ca6b2f1dad8339
import copy

import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvModule(nn.Module):
    """conv / norm / act block (mmcv.cnn.ConvModule, default act ReLU(inplace=True))."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, dilation=1, bias=False,
                 conv_cfg=dict(type='Conv1d'), norm_cfg=dict(type='BN1d')):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, stride=stride, dilation=dilation, bias=bias)
        self.bn = nn.BatchNorm1d(out_channels)
        self.activate = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.activate(self.bn(self.conv(x)))


class BasicTemporalBlock(nn.Module):
    """Basic block for VideoPose3D."""

    def __init__(self, in_channels, out_channels, mid_channels=1024, kernel_size=3, dilation=3, dropout=0.25,
                 causal=False, residual=True, use_stride_conv=False,
                 conv_cfg=dict(type='Conv1d'), norm_cfg=dict(type='BN1d')):
        conv_cfg = copy.deepcopy(conv_cfg)
        norm_cfg = copy.deepcopy(norm_cfg)
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.dropout = dropout
        self.causal = causal
        self.residual = residual
        self.use_stride_conv = use_stride_conv

        self.pad = (kernel_size - 1) * dilation // 2
        self.stride = 1
        self.causal_shift = kernel_size // 2 * dilation if causal else 0

        self.conv1 = ConvModule(in_channels, mid_channels, kernel_size=kernel_size, stride=self.stride,
                                dilation=self.dilation, bias=False, conv_cfg=conv_cfg, norm_cfg=norm_cfg)
        self.conv2 = ConvModule(mid_channels, out_channels, kernel_size=1, bias=False,
                                conv_cfg=conv_cfg, norm_cfg=norm_cfg)
        self.short_cut = None
        self.dropout = nn.Dropout(dropout) if dropout > 0 else None

    def forward(self, x):
        assert 0 <= self.pad + self.causal_shift < x.shape[2] - self.pad + self.causal_shift <= x.shape[2]

        out = self.conv1(x)
        if self.dropout is not None:
            out = self.dropout(out)

        out = self.conv2(out)
        if self.dropout is not None:
            out = self.dropout(out)

        if self.residual:
            res = x[:, :, (self.pad + self.causal_shift):(x.shape[2] - self.pad + self.causal_shift)]
            if self.short_cut is not None:
                res = self.short_cut(res)
            out = out + res

        return out


class TCN(nn.Module):
    """Temporal Convolutional Networks backbone."""

    def __init__(self, in_channels, stem_channels=1024, num_blocks=2, kernel_sizes=(3, 3, 3), dropout=0.25):
        super().__init__()
        self.expand_conv = ConvModule(in_channels, stem_channels, kernel_size=kernel_sizes[0], bias=False)
        dilation = kernel_sizes[0]
        self.tcn_blocks = nn.ModuleList()
        for i in range(1, num_blocks + 1):
            self.tcn_blocks.append(
                BasicTemporalBlock(in_channels=stem_channels, out_channels=stem_channels,
                                   mid_channels=stem_channels, kernel_size=kernel_sizes[i],
                                   dilation=dilation, dropout=dropout))
            dilation *= kernel_sizes[i]

    def forward(self, x):
        x = self.expand_conv(x)
        outs = []
        for i in range(len(self.tcn_blocks)):
            x = self.tcn_blocks[i](x)
            outs.append(x)
        return tuple(outs)


class TemporalRegressionHead(nn.Module):
    def __init__(self, in_channels, num_joints=17):
        super().__init__()
        self.num_joints = num_joints
        self.conv = nn.Conv1d(in_channels, num_joints * 3, 1)

    def forward(self, x):
        x = x[-1]
        output = self.conv(x)
        N = output.shape[0]
        return output.reshape(N, self.num_joints, 3)


def main():
    backbone = TCN(in_channels=2 * 17, stem_channels=32, num_blocks=2, kernel_sizes=(3, 3, 3), dropout=0.)
    keypoint_head = TemporalRegressionHead(32, num_joints=17)
    backbone.train()
    keypoints_2d = torch.randn(4, 2 * 17, 27)
    target_3d = torch.randn(4, 17, 3)
    output = keypoint_head(backbone(keypoints_2d))
    loss = (output - target_3d).abs().mean()
    loss.backward()
    return loss.detach(), backbone.expand_conv.conv.weight.grad


loss, expand_conv_grad = main()
