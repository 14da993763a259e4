# label: hazard raises
# why: FIRBlur's conv weight is an expand view of the registered kernel buffer, and the DDP buffer broadcast before the second (marginal-consistency) forward copies into that buffer in place, invalidating the weight the first forward saved for backward.
# source: https://github.com/ai2cm/ace/commit/70315380bf
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class FIRBlur(nn.Module):
    """Depthwise binomial (FIR) low-pass applied per frame, periodic in longitude."""

    def __init__(self):
        super().__init__()
        f = torch.tensor([1.0, 2.0, 1.0])
        k = torch.outer(f, f)
        self.register_buffer("kernel", (k / k.sum())[None, None, None])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = x.shape[1]
        w = self.kernel.expand(c, 1, 1, 3, 3)
        x = torch.cat([x[..., -1:], x, x[..., :1]], dim=-1)
        x = F.pad(x, (0, 0, 1, 1))
        return F.conv3d(x, w, groups=c)


class VideoDenoiser(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.inp = nn.Conv3d(channels, channels, kernel_size=1)
        self.blur = FIRBlur()
        self.out = nn.Conv3d(channels, channels, kernel_size=1)

    def forward(self, x):
        return self.out(self.blur(self.inp(x)))


def sync_buffers(module, src_buffers):
    # What DistributedDataParallel(broadcast_buffers=True) does at the start of
    # every forward: copy rank 0's buffers into the local ones in place.
    with torch.no_grad():
        for (name, buf), src in zip(module.named_buffers(), src_buffers):
            buf.copy_(src)  # <-- IPL001


def main():
    channels = 4
    model = VideoDenoiser(channels)
    rank0_buffers = [b.clone() for b in model.buffers()]
    x = torch.randn(2, channels, 5, 6, 8)

    sync_buffers(model, rank0_buffers)
    denoised = model(x)
    loss = (denoised - x).pow(2).mean()

    # marginal-consistency loss: a second forward on a temporal subset before backward
    sync_buffers(model, rank0_buffers)
    denoised_sub = model(x[:, :, 1:-1])
    marginal_loss = (denoised_sub - denoised[:, :, 1:-1]).pow(2).mean()

    total = loss + 0.5 * marginal_loss
    total.backward()
    return total.detach(), model.inp.weight.grad


total_loss, inp_weight_grad = main()
