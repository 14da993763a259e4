# label: safe
# why: DisentangledNonLocal2d subtracts the means with theta_x -= ... / phi_x -= ... on views of plain 1x1 conv outputs (before matmul saves them) and rescales the matmul result with /=, none of which overwrites a tensor already saved for backward.
# source: https://github.com/open-mmlab/mmsegmentation/blob/0cd02965abd8b98a622e4f16d0585959ef62c8be/mmseg/models/decode_heads/dnl_head.py
import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0, norm=False, act=False):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, bias=not norm)
        self.bn = nn.BatchNorm2d(out_channels) if norm else None
        self.activate = nn.ReLU(inplace=True) if act else None

    def forward(self, x):
        x = self.conv(x)
        if self.bn is not None:
            x = self.bn(x)
        if self.activate is not None:
            x = self.activate(x)
        return x


class NonLocal2d(nn.Module):
    def __init__(self, in_channels, reduction=2, use_scale=True, mode='embedded_gaussian'):
        super().__init__()
        self.in_channels = in_channels
        self.reduction = reduction
        self.use_scale = use_scale
        self.inter_channels = max(in_channels // reduction, 1)
        self.mode = mode
        self.g = ConvModule(self.in_channels, self.inter_channels, kernel_size=1)
        self.conv_out = ConvModule(self.inter_channels, self.in_channels, kernel_size=1, norm=True)
        self.theta = ConvModule(self.in_channels, self.inter_channels, kernel_size=1)
        self.phi = ConvModule(self.in_channels, self.inter_channels, kernel_size=1)


class DisentangledNonLocal2d(NonLocal2d):
    def __init__(self, *arg, temperature, **kwargs):
        super().__init__(*arg, **kwargs)
        self.temperature = temperature
        self.conv_mask = nn.Conv2d(self.in_channels, 1, kernel_size=1)

    def embedded_gaussian(self, theta_x, phi_x):
        pairwise_weight = torch.matmul(theta_x, phi_x)
        if self.use_scale:
            pairwise_weight /= theta_x.shape[-1]**0.5
        pairwise_weight /= self.temperature
        pairwise_weight = pairwise_weight.softmax(dim=-1)
        return pairwise_weight

    def forward(self, x):
        n = x.size(0)
        g_x = self.g(x).view(n, self.inter_channels, -1)
        g_x = g_x.permute(0, 2, 1)

        theta_x = self.theta(x).view(n, self.inter_channels, -1)
        theta_x = theta_x.permute(0, 2, 1)
        phi_x = self.phi(x).view(n, self.inter_channels, -1)

        # subtract mean
        theta_x -= theta_x.mean(dim=-2, keepdim=True)
        phi_x -= phi_x.mean(dim=-1, keepdim=True)

        pairwise_func = getattr(self, self.mode)
        pairwise_weight = pairwise_func(theta_x, phi_x)

        y = torch.matmul(pairwise_weight, g_x)
        y = y.permute(0, 2, 1).contiguous().reshape(n, self.inter_channels, *x.size()[2:])

        unary_mask = self.conv_mask(x)
        unary_mask = unary_mask.view(n, 1, -1)
        unary_mask = unary_mask.softmax(dim=-1)
        unary_x = torch.matmul(unary_mask, g_x)
        unary_x = unary_x.permute(0, 2, 1).contiguous().reshape(n, self.inter_channels, 1, 1)

        output = x + self.conv_out(y) + self.conv_out(unary_x)
        return output


class DNLHead(nn.Module):
    def __init__(self, in_channels=4, channels=8, num_classes=3, reduction=2, use_scale=True,
                 mode='embedded_gaussian', temperature=0.05):
        super().__init__()
        self.convs = nn.ModuleList([
            ConvModule(in_channels, channels, 3, padding=1, norm=True, act=True),
            ConvModule(channels, channels, 3, padding=1, norm=True, act=True),
        ])
        self.dnl_block = DisentangledNonLocal2d(
            in_channels=channels, reduction=reduction, use_scale=use_scale, mode=mode, temperature=temperature)
        self.conv_seg = nn.Conv2d(channels, num_classes, kernel_size=1)

    def forward(self, inputs):
        x = inputs
        output = self.convs[0](x)
        output = self.dnl_block(output)
        output = self.convs[1](output)
        output = self.conv_seg(output)
        return output


head = DNLHead().train()
feats = torch.randn(2, 4, 6, 6)
seg_label = torch.randint(0, 3, (2, 6, 6))
seg_logit = head(feats)
loss_seg = nn.functional.cross_entropy(seg_logit, seg_label, ignore_index=255)
loss_seg.backward()
