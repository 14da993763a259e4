# label: hazard raises no-twin
# why: the halo-exchange Function fills the halo of its input in place (declared with ctx.mark_dirty), but that input is the output of an in-place ReLU that saved it for backward
# source: https://github.com/distdl/distdl/issues/199
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class HaloExchangeFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, halo):
        ctx.halo = halo
        ctx.mark_dirty(input)
        buf = input.detach()
        buf[..., :halo] = buf[..., -2 * halo:-halo].clone()  # <-- IPL001: fills the halo of a tensor the in-place ReLU saved
        buf[..., -halo:] = buf[..., halo:2 * halo].clone()  # <-- IPL001: fills the halo of a tensor the in-place ReLU saved
        return input

    @staticmethod
    def backward(ctx, grad_output):
        halo = ctx.halo
        grad_input = grad_output.clone()
        grad_input[..., -2 * halo:-halo] += grad_output[..., :halo]
        grad_input[..., halo:2 * halo] += grad_output[..., -halo:]
        grad_input[..., :halo] = 0
        grad_input[..., -halo:] = 0
        return grad_input, None


class HaloExchange(nn.Module):
    def __init__(self, halo):
        super().__init__()
        self.halo = halo

    def forward(self, input):
        return HaloExchangeFunction.apply(input, self.halo)


class DistributedConv1d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.halo_layer = HaloExchange(kernel_size // 2)
        self.conv_layer = nn.Conv1d(in_channels, out_channels, kernel_size)

    def forward(self, input):
        input_exchanged = self.halo_layer(input)
        return self.conv_layer(input_exchanged)


class UNetBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.lift = nn.Conv1d(1, channels, 1)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv = DistributedConv1d(channels, channels, 3)
        self.relu2 = nn.ReLU(inplace=True)
        self.out = nn.Conv1d(channels, 1, 1)

    def forward(self, x):
        x = F.pad(self.lift(x), (1, 1))
        x = self.relu1(x)
        x = self.conv(x)
        x = self.relu2(x)
        return self.out(x)


net = UNetBlock(4)
signal = torch.randn(2, 1, 10)
target = torch.randn(2, 1, 10)
loss = F.mse_loss(net(signal), target)
loss.backward()
