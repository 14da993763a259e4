# label: hazard raises
# why: in the RSN residual-steps block, `inputs` is either a torch.split view of the conv-bn-relu output or the ReLU output of the previous step; `inputs += outputs[i - 1][j]` overwrites a tensor the ReLU saved for backward.
# source: https://github.com/open-mmlab/mmpose/commit/7079d08692e8b4af32949a736c962e0294732d21
import torch
import torch.nn as nn

torch.manual_seed(0)


def conv_bn_relu(cin, cout, k, stride=1, padding=0):
    return nn.Sequential(
        nn.Conv2d(cin, cout, k, stride, padding, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=False),
    )


class RSB(nn.Module):
    def __init__(self, in_channels, out_channels, num_steps=3, branch_channels=4):
        super().__init__()
        self.num_steps = num_steps
        self.branch_channels = branch_channels
        self.conv_bn_relu1 = conv_bn_relu(in_channels, num_steps * branch_channels, 1)
        for i in range(num_steps):
            for j in range(i + 1):
                self.add_module(
                    f"conv_bn_relu2_{i + 1}_{j + 1}",
                    conv_bn_relu(branch_channels, branch_channels, 3, padding=1),
                )
        self.conv_bn3 = nn.Sequential(
            nn.Conv2d(num_steps * branch_channels, out_channels, 1, bias=False),
            nn.BatchNorm2d(out_channels),
        )
        self.relu = nn.ReLU(inplace=False)

    def forward(self, x):
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
                    inputs += outputs[i - 1][j]  # <-- IPL001: adds into a split view / ReLU output saved for backward
                module_i_j = getattr(self, f"conv_bn_relu2_{i + 1}_{j + 1}")
                outputs[i].append(module_i_j(inputs))
            outs.append(outputs[i][i])
        out = torch.cat(tuple(outs), 1)
        out = self.conv_bn3(out)
        out = out + identity
        return self.relu(out)


block = RSB(8, 8)
images = torch.randn(2, 8, 6, 6)
feats = block(images)
loss = feats.pow(2).mean()
loss.backward()
grad_norm = block.conv_bn_relu1[0].weight.grad.norm()
