# label: hazard raises
# why: RSB.forward adds the previous step's output into inputs in place, but inputs is either a view returned by torch.split (whose SplitBackward needs the views intact) or outputs[i][j - 1], a ReLU output that ReLU saved for its own backward.
# source: https://github.com/open-mmlab/mmpose/commit/2a32f0626be3ca6ed054be62f243c500534e82e3
import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, act_cfg=dict(type='ReLU'),
                 norm_cfg=dict(type='BN'), inplace=False):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.activate = nn.ReLU(inplace=inplace) if act_cfg is not None else None

    def forward(self, x):
        x = self.bn(self.conv(x))
        if self.activate is not None:
            x = self.activate(x)
        return x


class RSB(nn.Module):
    """Residual Steps block for RSN. Paper ref: Cai et al. "Learning Delicate
    Local Representations for Multi-Person Pose Estimation" (ECCV 2020)."""

    expansion = 1

    def __init__(self, in_channels, out_channels, num_steps=4, stride=1, downsample=None,
                 norm_cfg=dict(type='BN'), expand_times=26, res_top_channels=64):
        super().__init__()
        assert num_steps > 1
        self.in_channels = in_channels
        self.branch_channels = self.in_channels * expand_times
        self.branch_channels //= res_top_channels
        self.out_channels = out_channels
        self.stride = stride
        self.downsample = downsample
        self.norm_cfg = norm_cfg
        self.num_steps = num_steps
        self.conv_bn_relu1 = ConvModule(self.in_channels, self.num_steps * self.branch_channels, kernel_size=1,
                                        stride=self.stride, padding=0, norm_cfg=self.norm_cfg, inplace=False)
        for i in range(self.num_steps):
            for j in range(i + 1):
                module_name = f'conv_bn_relu2_{i + 1}_{j + 1}'
                self.add_module(module_name, ConvModule(self.branch_channels, self.branch_channels, kernel_size=3,
                                                        stride=1, padding=1, norm_cfg=self.norm_cfg, inplace=False))
        self.conv_bn3 = ConvModule(self.num_steps * self.branch_channels, self.out_channels * self.expansion,
                                   kernel_size=1, stride=1, padding=0, act_cfg=None, norm_cfg=self.norm_cfg,
                                   inplace=False)
        self.relu = nn.ReLU(inplace=False)

    def forward(self, x):
        """Forward function."""
        identity = x
        x = self.conv_bn_relu1(x)
        spx = torch.split(x, self.branch_channels, 1)
        outputs = list()
        outs = list()
        for i in range(self.num_steps):
            outputs_i = list()
            outputs.append(outputs_i)
            for j in range(i + 1):
                if j == 0:
                    inputs = spx[i]
                else:
                    inputs = outputs[i][j - 1]
                if i > j:
                    inputs += outputs[i - 1][j]  # <-- IPL001
                module_name = f'conv_bn_relu2_{i + 1}_{j + 1}'
                module_i_j = getattr(self, module_name)
                outputs[i].append(module_i_j(inputs))

            outs.append(outputs[i][i])
        out = torch.cat(tuple(outs), 1)
        out = self.conv_bn3(out)

        if self.downsample is not None:
            identity = self.downsample(identity)
        out = out + identity

        out = self.relu(out)

        return out


def main():
    block = RSB(16, 16, num_steps=3, expand_times=26, res_top_channels=64)
    head = nn.Conv2d(16, 4, 1)  # 4 keypoint heatmaps
    images = torch.randn(2, 16, 8, 8)
    target_heatmaps = torch.rand(2, 4, 8, 8)
    heatmaps = head(block(images))
    loss = ((heatmaps - target_heatmaps) ** 2).mean()
    loss.backward()
    return loss.detach(), block.conv_bn_relu1.conv.weight.grad


loss, conv1_grad = main()
