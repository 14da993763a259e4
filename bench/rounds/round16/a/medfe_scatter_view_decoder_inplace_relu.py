# label: hazard raises
# why: the scatter Function hands the decoder a view it created, and the decoder's first layer is an in-place ReLU that modifies that custom-Function view.
# source: https://github.com/KumapowerLIU/Rethinking-Inpainting-MEDFE/issues/25
import torch
import torch.nn as nn
from torch.autograd import Function

torch.manual_seed(0)


class Scatter(Function):
    """Single-device stand-in for DataParallel's Scatter: returns chunks (views) of the input."""

    @staticmethod
    def forward(ctx, chunks, input):
        ctx.chunks = chunks
        return tuple(input.chunk(chunks, dim=0))

    @staticmethod
    def backward(ctx, *grad_output):
        return None, torch.cat(grad_output, dim=0)


class UnetSkipDecoder(nn.Module):
    def __init__(self, in_nc, out_nc):
        super(UnetSkipDecoder, self).__init__()
        uprelu = nn.ReLU(True)  # <-- IPL001: in-place ReLU applied to the scattered view
        upconv = nn.ConvTranspose2d(in_nc, out_nc, kernel_size=4, stride=2, padding=1)
        upnorm = nn.BatchNorm2d(out_nc)
        self.model = nn.Sequential(uprelu, upconv, upnorm)

    def forward(self, x):
        x = self.model(x)
        return x


class Encoder(nn.Module):
    def __init__(self):
        super(Encoder, self).__init__()
        self.model = nn.Sequential(nn.Conv2d(4, 8, 4, 2, 1), nn.BatchNorm2d(8))

    def forward(self, x):
        return self.model(x)


encoder = Encoder()
decoder = UnetSkipDecoder(8, 3)
images = torch.randn(2, 3, 8, 8)
masks = (torch.rand(2, 1, 8, 8) > 0.5).float()
feature = encoder(torch.cat([images * (1 - masks), masks], 1))
replicas_input = Scatter.apply(1, feature)
fake_out = decoder(replicas_input[0])
loss_G = (fake_out - images).abs().mean()
loss_G.backward()
