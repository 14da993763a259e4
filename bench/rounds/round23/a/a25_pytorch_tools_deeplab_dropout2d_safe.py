# label: safe
# why: after the fix DeepLabHead uses an out-of-place nn.Dropout2d(drop_rate), so the in-place ReLUs inside ABN only overwrite fresh batch_norm outputs that nothing saved, and the dropout leaves the saved ReLU result intact.
# source: https://github.com/bonlime/pytorch-tools/commit/251dee2d58545ca50c0a4766c6f35a107fac634d ("fix two inplace operations error", pytorch_tools/modules/decoder.py)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    return nn.Conv2d(in_planes, out_planes, 3, stride=stride, padding=dilation, groups=groups, bias=False, dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1, bias=False):
    return nn.Conv2d(in_planes, out_planes, 1, stride=stride, bias=bias)


class ABN(nn.Module):
    """Activated Batch Normalization"""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, activation="relu"):
        super(ABN, self).__init__()
        self.eps = eps
        self.momentum = momentum
        self.activation = activation
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        x = F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                         self.training, self.momentum, self.eps)
        return F.relu(x, inplace=True)


class DepthwiseSeparableConv(nn.Sequential):
    def __init__(self, in_channels, out_channels, stride=1, dilation=1, norm_layer=ABN, norm_act="relu"):
        modules = [
            conv3x3(in_channels, in_channels, stride=stride, groups=in_channels, dilation=dilation),
            conv1x1(in_channels, out_channels),
            norm_layer(out_channels, activation=norm_act),
        ]
        super().__init__(*modules)


class DeepLabHead(nn.Module):
    def __init__(self, encoder_channels, num_classes, drop_rate=0, norm_layer=ABN, norm_act="relu"):
        PROJ_CONV_CHANNELS = 8
        OUT_CHANNELS = 16
        super().__init__()
        norm_params = {"norm_layer": norm_layer, "norm_act": norm_act}
        self.aspp = nn.Sequential(conv1x1(encoder_channels[0], OUT_CHANNELS), norm_layer(OUT_CHANNELS, activation=norm_act))
        self.conv0 = nn.Sequential(conv3x3(OUT_CHANNELS, OUT_CHANNELS), norm_layer(OUT_CHANNELS, activation=norm_act))
        self.proj_conv = nn.Sequential(
            conv1x1(encoder_channels[3], PROJ_CONV_CHANNELS),
            norm_layer(PROJ_CONV_CHANNELS, activation=norm_act),
        )
        self.sep_conv1 = DepthwiseSeparableConv(OUT_CHANNELS + PROJ_CONV_CHANNELS, OUT_CHANNELS, **norm_params)
        self.sep_conv2 = DepthwiseSeparableConv(OUT_CHANNELS, OUT_CHANNELS, **norm_params)
        self.dropout = nn.Dropout2d(drop_rate)
        self.final_conv = conv1x1(OUT_CHANNELS, num_classes)

    def forward(self, x):
        encoder_head = x[0]
        skip = x[3]  # downsampled 4x times
        x = self.aspp(encoder_head)
        x = self.conv0(x)
        x = F.interpolate(x, size=skip.shape[-2:], mode="bilinear", align_corners=False)
        skip = self.proj_conv(skip)
        x = self.sep_conv1(torch.cat([skip, x], dim=1))
        x = self.sep_conv2(x)
        x = self.dropout(x)
        x = self.final_conv(x)
        return x


def main():
    encoder_channels = (32, 24, 16, 12)
    features = [
        torch.randn(2, 32, 2, 2),
        torch.randn(2, 24, 4, 4),
        torch.randn(2, 16, 4, 4),
        torch.randn(2, 12, 8, 8),
    ]
    head = DeepLabHead(encoder_channels, num_classes=3, drop_rate=0.2)
    head.train()
    target = torch.randint(0, 3, (2, 8, 8))
    logits = head(features)
    loss = F.cross_entropy(logits, target)
    loss.backward()
    return loss.detach(), head.final_conv.weight.grad


loss, final_grad = main()
