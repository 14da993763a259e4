# label: hazard raises
# why: BatchEnsembleConv2d scales its input per ensemble member with x *= s; when layers are stacked, the second layer's x is the ReLU output that ReluBackward saved, so the in-place scaling bumps its version and backward raises (the maintainers' fix clones x first)
# source: https://github.com/Cortys/SEP-Probly-WS2526/issues/767 (BatchEnsembleConv2d.forward before the fix "clones the input x: x = x.clone() before modifying x with s")
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BatchEnsembleConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_members, padding=0):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.num_members = num_members
        self.stride = 1
        self.padding = padding
        self.dilation = 1
        self.groups = 1
        weight = torch.randn(out_channels, in_channels, kernel_size, kernel_size) * 0.3
        self.weight = nn.Parameter(weight)
        self.bias = nn.Parameter(torch.zeros(out_channels))
        self.s = nn.Parameter(1.0 + 0.5 * torch.randn(num_members, in_channels))
        self.r = nn.Parameter(1.0 + 0.5 * torch.randn(num_members, out_channels))

    def forward(self, x):
        if x.dim() == 4:
            # If this is the first layer, expand to ensemble dimension
            x = x.unsqueeze(0).expand(self.num_members, -1, -1, -1, -1)
        elif x.dim() == 5 and x.size(0) != self.num_members:
            raise ValueError(f"Expected ensemble dim {self.num_members}, got {x.size(0)}")

        x *= self.s[:, None, :, None, None]  # <-- IPL001: for a stacked layer x is the previous ReLU output, which ReluBackward saved
        e, b, c, h, w = x.shape
        x = x.reshape(e * b, c, h, w)

        y = F.conv2d(x, self.weight, bias=None, stride=self.stride, padding=self.padding,
                     dilation=self.dilation, groups=self.groups)
        _, c, h, w = y.shape
        y = y.view(e, b, c, h, w)
        y *= self.r[:, None, :, None, None]
        y += self.bias[None, None, :, None, None]
        return y


conv1 = BatchEnsembleConv2d(1, 2, 3, num_members=3, padding=1)
conv2 = BatchEnsembleConv2d(2, 2, 3, num_members=3, padding=1)

images = torch.randn(4, 1, 6, 6)
# feed the ensemble dimension explicitly (a 4-D batch would be expanded and x *= s would hit overlapping memory)
ensemble_images = images.unsqueeze(0).repeat(3, 1, 1, 1, 1)
hidden = conv1(ensemble_images)
out = conv2(torch.relu(hidden))
loss = out.pow(2).mean()
loss.backward()

loss_value = loss.detach()
s1_grad = conv1.s.grad.clone()
r2_grad = conv2.r.grad.clone()
w1_grad = conv1.weight.grad.clone()
