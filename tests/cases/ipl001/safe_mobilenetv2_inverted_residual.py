# label: safe
# why: MobileNetV2 inverted residual: conv-bn-ReLU6(inplace) stages and `x + self.conv(x)` residual; no inplace write touches a saved tensor
import torch
import torch.nn as nn

torch.manual_seed(0)


def conv_bn_act(cin, cout, k=3, stride=1, groups=1):
    return nn.Sequential(
        nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU6(inplace=True),
    )


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand_ratio):
        super().__init__()
        hidden = cin * expand_ratio
        self.use_res_connect = stride == 1 and cin == cout
        self.conv = nn.Sequential(
            conv_bn_act(cin, hidden, k=1),
            conv_bn_act(hidden, hidden, stride=stride, groups=hidden),
            nn.Conv2d(hidden, cout, 1, bias=False),
            nn.BatchNorm2d(cout),
        )

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


model = nn.Sequential(conv_bn_act(3, 4, stride=2), InvertedResidual(4, 4, 1, 3), InvertedResidual(4, 6, 2, 3))
x = torch.randn(2, 3, 8, 8)
feat = model(x)
loss = feat.abs().mean()
loss.backward()
