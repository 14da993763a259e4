# label: safe
# why: the fixed form rebinds x_h to a new tensor (`x_h = x_h + ...`), so the ReLU result that the caller passed in and that ReLU saved for backward is left untouched.
# source: https://github.com/PaddlePaddle/PaddleSeg/issues/3017 (rtformer.py EABlock.forward `x_h += F.interpolate(...)`, reported from a PyTorch port; PaddleSeg commit afca9986583b90fcfdac0fbef79c46c7f96d5e9f)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, bias_attr=False):
    return nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, bias=bias_attr)


def bn2d(in_channels, bn_mom=0.1):
    return nn.BatchNorm2d(in_channels, momentum=bn_mom)


class MLP(nn.Module):
    def __init__(self, in_channels, hidden_channels=None, out_channels=None, drop_rate=0.):
        super().__init__()
        hidden_channels = hidden_channels or in_channels
        out_channels = out_channels or in_channels
        self.norm = bn2d(in_channels)
        self.conv1 = nn.Conv2d(in_channels, hidden_channels, 3, 1, 1)
        self.act = nn.GELU()
        self.conv2 = nn.Conv2d(hidden_channels, out_channels, 3, 1, 1)
        self.drop = nn.Dropout(drop_rate)

    def forward(self, x):
        x = self.norm(x)
        x = self.drop(self.act(self.conv1(x)))
        return self.drop(self.conv2(x))


class EABlock(nn.Module):
    def __init__(self, in_channels, out_channels, drop_rate=0.):
        super().__init__()
        in_channels_h, in_channels_l = in_channels
        out_channels_h, out_channels_l = out_channels
        self.proj_flag = in_channels_l != out_channels_l
        if self.proj_flag:
            self.attn_shortcut_l = nn.Sequential(bn2d(in_channels_l), conv2d(in_channels_l, out_channels_l, 1, 2, 0))
        self.mlp_l = MLP(out_channels_l, drop_rate=drop_rate)
        self.compression = nn.Sequential(
            bn2d(out_channels_l), nn.ReLU(), conv2d(out_channels_l, out_channels_h, kernel_size=1))
        self.mlp_h = MLP(out_channels_h, drop_rate=drop_rate)
        self.down = nn.Sequential(
            bn2d(out_channels_h), nn.ReLU(),
            conv2d(out_channels_h, out_channels_l // 2, kernel_size=3, stride=2, padding=1),
            bn2d(out_channels_l // 2), nn.ReLU(),
            conv2d(out_channels_l // 2, out_channels_l, kernel_size=3, stride=2, padding=1))

    def forward(self, x):
        x_h, x_l = x
        # low resolution
        x_l_res = self.attn_shortcut_l(x_l) if self.proj_flag else x_l
        x_l = x_l_res + self.mlp_l(x_l_res)
        # compression
        x_h_shape = x_h.shape[2:]
        x_l_cp = self.compression(x_l)
        x_h = x_h + F.interpolate(x_l_cp, size=x_h_shape, mode="bilinear")
        # high resolution
        x_h = x_h + self.mlp_h(x_h)
        # injection
        x_l = x_l + self.down(x_h)
        return x_h, x_l


class RTFormerStage(nn.Module):
    def __init__(self, base_chs=4):
        super().__init__()
        self.relu = nn.ReLU()
        self.layer4 = EABlock([base_chs * 2, base_chs * 4], [base_chs * 2, base_chs * 8])

    def forward(self, x3_, x3):
        x4_, x4 = self.layer4([self.relu(x3_), self.relu(x3)])
        return x4_, x4


def main():
    model = RTFormerStage()
    x3_ = torch.randn(2, 8, 8, 8, requires_grad=True)
    x3 = torch.randn(2, 16, 4, 4, requires_grad=True)
    x4_, x4 = model(x3_, x3)
    loss = x4_.pow(2).mean() + x4.pow(2).mean()
    loss.backward()
    return loss, x3_.grad


loss, grad = main()
