# label: hazard raises
# why: with agg='se' and use_lab=False the HGBlock aggregation ends in ConvBNAct's ReLU, so the residual x += identity writes into a ReLU output saved for backward (the 'ese' aggregation, ending in torch.mul, would not trip this).
# source: https://github.com/huggingface/pytorch-image-models/commit/6862c9850a4a7577ed7227f850c83153f328a066
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LearnableAffineBlock(nn.Module):
    def __init__(self, scale_value=1.0, bias_value=0.0):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor([scale_value]))
        self.bias = nn.Parameter(torch.tensor([bias_value]))

    def forward(self, x):
        return self.scale * x + self.bias


class ConvBNAct(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, groups=1, use_act=True, use_lab=False):
        super().__init__()
        self.use_act = use_act
        self.use_lab = use_lab
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding=(kernel_size - 1) // 2, groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.act = nn.ReLU() if self.use_act else nn.Identity()
        self.lab = LearnableAffineBlock() if (self.use_act and self.use_lab) else nn.Identity()

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = self.act(x)
        x = self.lab(x)
        return x


class ESEModule(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 1)
        self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        identity = x
        x = x.mean((2, 3), keepdim=True)
        x = self.conv(x)
        x = self.sigmoid(x)
        return torch.mul(identity, x)


class HGBlock(nn.Module):
    def __init__(self, in_channels, mid_channels, out_channels, layer_num, kernel_size=3, residual=False, use_lab=False, agg="ese"):
        super().__init__()
        self.residual = residual
        self.layers = nn.ModuleList()
        for i in range(layer_num):
            self.layers.append(ConvBNAct(in_channels if i == 0 else mid_channels, mid_channels, kernel_size, stride=1, use_lab=use_lab))

        # feature aggregation
        total_channels = in_channels + layer_num * mid_channels
        if agg == "se":
            aggregation_squeeze_conv = ConvBNAct(total_channels, out_channels // 2, 1, stride=1, use_lab=use_lab)
            aggregation_excitation_conv = ConvBNAct(out_channels // 2, out_channels, 1, stride=1, use_lab=use_lab)
            self.aggregation = nn.Sequential(aggregation_squeeze_conv, aggregation_excitation_conv)
        else:
            aggregation_conv = ConvBNAct(total_channels, out_channels, 1, stride=1, use_lab=use_lab)
            att = ESEModule(out_channels)
            self.aggregation = nn.Sequential(aggregation_conv, att)

    def forward(self, x):
        identity = x
        output = []
        output.append(x)
        for layer in self.layers:
            x = layer(x)
            output.append(x)
        x = torch.cat(output, dim=1)
        x = self.aggregation(x)
        if self.residual:
            x += identity  # <-- IPL001: with agg='se', x is the ReLU output saved for backward
        return x


class HGStage(nn.Module):
    def __init__(self, in_channels, mid_channels, out_channels, block_num, layer_num, agg):
        super().__init__()
        blocks = []
        for i in range(block_num):
            blocks.append(HGBlock(in_channels if i == 0 else out_channels, mid_channels, out_channels, layer_num,
                                  residual=False if i == 0 else True, agg=agg))
        self.blocks = nn.Sequential(*blocks)

    def forward(self, x):
        return self.blocks(x)


stem = ConvBNAct(3, 8, 3, stride=2)
stage = HGStage(8, 4, 8, block_num=2, layer_num=2, agg="se")
head = nn.Linear(8, 5)
images = torch.randn(2, 3, 8, 8)
targets = torch.tensor([1, 3])
feats = stage(stem(images))
logits = head(F.adaptive_avg_pool2d(feats, 1).flatten(1))
loss = F.cross_entropy(logits, targets)
loss.backward()
