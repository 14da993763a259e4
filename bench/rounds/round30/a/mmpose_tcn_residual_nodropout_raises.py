# label: hazard raises
# why: once the TCN block's dropout became optional, with dropout=0 `out` is the output of ConvModule's in-place ReLU (saved for its backward), and the residual `out += res` overwrites it before backward.
# source: https://github.com/open-mmlab/mmpose/commit/83fe8b9e521a0af930e3c726f10f9540e822d500
import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvModule(nn.Module):
    """conv -> norm -> act (mmcv.cnn.ConvModule defaults: ReLU(inplace=True))."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, dilation=1):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, stride=stride,
                              dilation=dilation, bias=False)
        self.bn = nn.BatchNorm1d(out_channels)
        self.activate = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.activate(self.bn(self.conv(x)))


class BasicTemporalBlock(nn.Module):
    """Basic block for VideoPose3D."""

    def __init__(self, in_channels, out_channels, mid_channels=32, kernel_size=3, dilation=3,
                 dropout=0.0, causal=False, residual=True, use_stride_conv=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.dropout = dropout
        self.causal = causal
        self.residual = residual
        self.use_stride_conv = use_stride_conv

        self.pad = (kernel_size - 1) * dilation // 2
        if use_stride_conv:
            self.stride = kernel_size
            self.causal_shift = kernel_size // 2 if causal else 0
            self.dilation = 1
        else:
            self.stride = 1
            self.causal_shift = kernel_size // 2 * dilation if causal else 0

        self.conv1 = ConvModule(in_channels, mid_channels, kernel_size=kernel_size,
                                stride=self.stride, dilation=self.dilation)
        self.conv2 = ConvModule(mid_channels, out_channels, kernel_size=1)

        if residual and in_channels != out_channels:
            self.short_cut = nn.Conv1d(in_channels, out_channels, 1)
        else:
            self.short_cut = None

        if dropout > 0:
            self.dropout_layer = nn.Dropout(dropout)

    def forward(self, x):
        """Forward function."""
        out = self.conv1(x)
        if self.dropout > 0:
            out = self.dropout_layer(out)

        out = self.conv2(out)
        if self.dropout > 0:
            out = self.dropout_layer(out)

        if self.residual:
            if self.use_stride_conv:
                res = x[:, :, self.causal_shift + self.kernel_size // 2::self.kernel_size]
            else:
                res = x[:, :, (self.pad + self.causal_shift):(x.shape[2] - self.pad + self.causal_shift)]

            if self.short_cut is not None:
                res = self.short_cut(res)
            out += res  # <-- IPL001

        return out


def main():
    block = BasicTemporalBlock(in_channels=16, out_channels=16, dropout=0.0)
    keypoints_2d = torch.randn(2, 16, 27, requires_grad=True)
    out = block(keypoints_2d)
    out.pow(2).mean().backward()


main()
