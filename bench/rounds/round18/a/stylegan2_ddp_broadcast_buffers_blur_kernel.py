# label: hazard raises
# why: DistributedDataParallel's broadcast_buffers copies rank 0's buffers into the module in place before every forward; the discriminator is called on real and then fake images, so the second broadcast overwrites the Blur kernel the first call's conv saved for backward.
# source: https://github.com/rosinality/stylegan2-pytorch/issues/236
import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


def make_kernel(k):
    k = torch.tensor(k, dtype=torch.float32)
    if k.ndim == 1:
        k = k[None, :] * k[:, None]
    k /= k.sum()
    return k


class Blur(nn.Module):
    def __init__(self, kernel, pad):
        super().__init__()
        kernel = make_kernel(kernel)
        self.register_buffer("kernel", kernel)
        self.pad = pad

    def forward(self, input):
        c = input.shape[1]
        weight = self.kernel[None, None].expand(c, 1, -1, -1)
        return F.conv2d(F.pad(input, [self.pad[0], self.pad[1], self.pad[0], self.pad[1]]), weight, groups=c)


class ConvLayer(nn.Sequential):
    def __init__(self, in_channel, out_channel, kernel_size, downsample=False, blur_kernel=[1, 3, 3, 1]):
        layers = []
        if downsample:
            p = (len(blur_kernel) - 2) + (kernel_size - 1)
            layers.append(Blur(blur_kernel, pad=((p + 1) // 2, p // 2)))
            stride = 2
        else:
            stride = 1
        layers.append(nn.Conv2d(in_channel, out_channel, kernel_size, padding=0 if downsample else kernel_size // 2, stride=stride))
        layers.append(nn.LeakyReLU(0.2))
        super().__init__(*layers)


class Discriminator(nn.Module):
    def __init__(self, channel=4):
        super().__init__()
        self.convs = nn.Sequential(ConvLayer(3, channel, 1), ConvLayer(channel, channel, 3, downsample=True))
        self.final_linear = nn.Linear(channel * 4 * 4, 1)

    def forward(self, input):
        out = self.convs(input)
        return self.final_linear(out.flatten(1))


def broadcast_buffers_hook(module, inputs):
    # what DistributedDataParallel(broadcast_buffers=True) does before each forward:
    # copy the authoritative (rank 0) buffers into this replica's buffers
    for buf, src in zip(module.buffers(), module._rank0_buffers):
        buf.copy_(src)  # <-- IPL001: in-place buffer sync overwrites the blur kernel saved by the previous forward's conv


def d_logistic_loss(real_pred, fake_pred):
    real_loss = F.softplus(-real_pred)
    fake_loss = F.softplus(fake_pred)
    return real_loss.mean() + fake_loss.mean()


discriminator = Discriminator()
discriminator._rank0_buffers = [b.clone() for b in discriminator.buffers()]
discriminator.register_forward_pre_hook(broadcast_buffers_hook)
generator = nn.Sequential(nn.Linear(8, 3 * 8 * 8), nn.Tanh())
d_optim = torch.optim.Adam(discriminator.parameters(), lr=0.002, betas=(0.0, 0.99))

real_img = torch.randn(2, 3, 8, 8)
noise = torch.randn(2, 8)
fake_img = generator(noise).view(2, 3, 8, 8)
fake_pred = discriminator(fake_img.detach())
real_pred = discriminator(real_img)
d_loss = d_logistic_loss(real_pred, fake_pred)
discriminator.zero_grad()
d_loss.backward()
d_optim.step()
