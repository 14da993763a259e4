# label: safe
# why: after the fix the coupling layer builds new tensors with z2 = z2 + shift and z2 = z2 * scale, so the z1 view saved by the coupling conv keeps its version.
# source: https://github.com/chaiyujin/glow-pytorch/pull/6
import torch
import torch.nn as nn

torch.manual_seed(0)


def split_feature(tensor, type="split"):
    C = tensor.size(1)
    if type == "split":
        return tensor[:, : C // 2, ...], tensor[:, C // 2 :, ...]
    elif type == "cross":
        return tensor[:, 0::2, ...], tensor[:, 1::2, ...]


def cat_feature(tensor_a, tensor_b):
    return torch.cat((tensor_a, tensor_b), dim=1)


class InvertibleConv1x1(nn.Module):
    def __init__(self, num_channels):
        super().__init__()
        w_init = torch.linalg.qr(torch.randn(num_channels, num_channels))[0]
        self.weight = nn.Parameter(w_init)

    def forward(self, input, logdet):
        dlogdet = torch.slogdet(self.weight)[1] * input.size(2) * input.size(3)
        weight = self.weight.view(*self.weight.shape, 1, 1)
        return nn.functional.conv2d(input, weight), logdet + dlogdet


class FlowStep(nn.Module):
    def __init__(self, in_channels, hidden_channels):
        super().__init__()
        self.invconv = InvertibleConv1x1(in_channels)
        self.f = nn.Sequential(
            nn.Conv2d(in_channels // 2, hidden_channels, 3, padding=1),
            nn.ReLU(inplace=False),
            nn.Conv2d(hidden_channels, in_channels, 3, padding=1),
        )

    def normal_flow(self, input, logdet):
        z, logdet = self.invconv(input, logdet)
        z1, z2 = split_feature(z, "split")
        h = self.f(z1)
        shift, scale = split_feature(h, "cross")
        scale = torch.sigmoid(scale + 2.0)
        z2 = z2 + shift
        z2 = z2 * scale
        logdet = torch.sum(torch.log(scale), dim=[1, 2, 3]) + logdet
        z = cat_feature(z1, z2)
        return z, logdet


step = FlowStep(in_channels=4, hidden_channels=8)
x = torch.randn(2, 4, 4, 4)
z, logdet = step.normal_flow(x, torch.zeros(2))
nll = 0.5 * z.pow(2).sum(dim=[1, 2, 3]) - logdet
loss = nll.mean()
loss.backward()
