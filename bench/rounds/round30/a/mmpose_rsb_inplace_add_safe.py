# label: safe
# why: the fix `inputs = inputs + outputs[i - 1][j]` builds a new tensor, so the split views of conv_bn_relu1's output and the ReLU outputs of earlier steps, which autograd saved, are left untouched.
# source: https://github.com/open-mmlab/mmpose/commit/453826f7e91a267910160fe150ba200e5e87754b
import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvModule(nn.Module):
    """conv -> norm -> act, as mmcv.cnn.ConvModule with inplace=False."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, act=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.activate = nn.ReLU(inplace=False) if act else None

    def forward(self, x):
        x = self.bn(self.conv(x))
        if self.activate is not None:
            x = self.activate(x)
        return x


class RSB(nn.Module):
    """Residual Steps block for RSN."""

    expansion = 1

    def __init__(self, in_channels, out_channels, num_steps=4, stride=1, downsample=None,
                 expand_times=26, res_top_channels=64):
        super().__init__()
        assert num_steps > 1
        self.in_channels = in_channels
        self.branch_channels = self.in_channels * expand_times
        self.branch_channels //= res_top_channels
        self.out_channels = out_channels
        self.downsample = downsample
        self.num_steps = num_steps
        self.conv_bn_relu1 = ConvModule(self.in_channels, self.num_steps * self.branch_channels,
                                        kernel_size=1, stride=stride, padding=0)
        for i in range(self.num_steps):
            for j in range(i + 1):
                module_name = f'conv_bn_relu2_{i + 1}_{j + 1}'
                self.add_module(module_name, ConvModule(self.branch_channels, self.branch_channels,
                                                        kernel_size=3, stride=1, padding=1))
        self.conv_bn3 = ConvModule(self.num_steps * self.branch_channels,
                                   self.out_channels * self.expansion, kernel_size=1, act=False)
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
                    inputs = inputs + outputs[i - 1][j]
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
    block = RSB(in_channels=64, out_channels=64, num_steps=4)
    x = torch.randn(2, 64, 8, 8, requires_grad=True)
    out = block(x)
    out.mean().backward()
    return out.detach(), x.grad, block.conv_bn_relu1.conv.weight.grad


out, x_grad, conv1_grad = main()
