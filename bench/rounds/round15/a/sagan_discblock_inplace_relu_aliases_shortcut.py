# label: hazard silent
# why: DiscBlock keeps the shortcut input as x0 = x and then applies its nn.ReLU(inplace=True) to x, which rectifies the very tensor x0 refers to, so the 1x1 shortcut conv silently receives relu(x) instead of the block input (the reference block feeds the un-activated x_0).
# source: https://github.com/voletiv/self-attention-GAN-pytorch/blob/0087e6d97a3a5752eff9797482fd43f6c91caedf/sagan_models.py (see also https://github.com/voletiv/self-attention-GAN-pytorch/issues/7)
import torch
import torch.nn as nn
from torch.nn.utils import spectral_norm
from torch.nn.init import xavier_uniform_

torch.manual_seed(0)


def init_weights(m):
    if type(m) == nn.Linear or type(m) == nn.Conv2d:
        xavier_uniform_(m.weight)
        m.bias.data.fill_(0.)


def snconv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, bias=True):
    return spectral_norm(nn.Conv2d(in_channels=in_channels, out_channels=out_channels, kernel_size=kernel_size,
                                   stride=stride, padding=padding, bias=bias))


def snlinear(in_features, out_features):
    return spectral_norm(nn.Linear(in_features=in_features, out_features=out_features))


def sn_embedding(num_embeddings, embedding_dim):
    return spectral_norm(nn.Embedding(num_embeddings=num_embeddings, embedding_dim=embedding_dim))


class Self_Attn(nn.Module):
    def __init__(self, in_channels):
        super(Self_Attn, self).__init__()
        self.snconv1x1_theta = snconv2d(in_channels, in_channels // 8, kernel_size=1)
        self.snconv1x1_phi = snconv2d(in_channels, in_channels // 8, kernel_size=1)
        self.snconv1x1_g = snconv2d(in_channels, in_channels // 2, kernel_size=1)
        self.snconv1x1_attn = snconv2d(in_channels // 2, in_channels, kernel_size=1)
        self.maxpool = nn.MaxPool2d(2, stride=2, padding=0)
        self.softmax = nn.Softmax(dim=-1)
        self.sigma = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        _, ch, h, w = x.size()
        theta = self.snconv1x1_theta(x).view(-1, ch // 8, h * w)
        phi = self.maxpool(self.snconv1x1_phi(x)).view(-1, ch // 8, h * w // 4)
        attn = self.softmax(torch.bmm(theta.permute(0, 2, 1), phi))
        g = self.maxpool(self.snconv1x1_g(x)).view(-1, ch // 2, h * w // 4)
        attn_g = torch.bmm(g, attn.permute(0, 2, 1)).view(-1, ch // 2, h, w)
        attn_g = self.snconv1x1_attn(attn_g)
        return x + self.sigma * attn_g


class DiscOptBlock(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(DiscOptBlock, self).__init__()
        self.snconv2d1 = snconv2d(in_channels, out_channels, kernel_size=3, stride=1, padding=1)
        self.relu = nn.ReLU(inplace=True)
        self.snconv2d2 = snconv2d(out_channels, out_channels, kernel_size=3, stride=1, padding=1)
        self.downsample = nn.AvgPool2d(2)
        self.snconv2d0 = snconv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0)

    def forward(self, x):
        x0 = x
        x = self.snconv2d1(x)
        x = self.relu(x)
        x = self.snconv2d2(x)
        x = self.downsample(x)
        x0 = self.downsample(x0)
        x0 = self.snconv2d0(x0)
        return x + x0


class DiscBlock(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(DiscBlock, self).__init__()
        self.relu = nn.ReLU(inplace=True)  # <-- IPL002: the first call rectifies x in place while x0 still refers to it
        self.snconv2d1 = snconv2d(in_channels, out_channels, kernel_size=3, stride=1, padding=1)
        self.snconv2d2 = snconv2d(out_channels, out_channels, kernel_size=3, stride=1, padding=1)
        self.downsample = nn.AvgPool2d(2)
        self.ch_mismatch = in_channels != out_channels
        self.snconv2d0 = snconv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0)

    def forward(self, x, downsample=True):
        x0 = x

        x = self.relu(x)
        x = self.snconv2d1(x)
        x = self.relu(x)
        x = self.snconv2d2(x)
        if downsample:
            x = self.downsample(x)

        if downsample or self.ch_mismatch:
            x0 = self.snconv2d0(x0)
            if downsample:
                x0 = self.downsample(x0)

        out = x + x0
        return out


class Discriminator(nn.Module):
    def __init__(self, d_conv_dim, num_classes):
        super(Discriminator, self).__init__()
        self.opt_block1 = DiscOptBlock(3, d_conv_dim)
        self.block1 = DiscBlock(d_conv_dim, d_conv_dim * 2)
        self.self_attn = Self_Attn(d_conv_dim * 2)
        self.block2 = DiscBlock(d_conv_dim * 2, d_conv_dim * 4)
        self.block3 = DiscBlock(d_conv_dim * 4, d_conv_dim * 4)
        self.relu = nn.ReLU(inplace=True)
        self.snlinear1 = snlinear(in_features=d_conv_dim * 4, out_features=1)
        self.sn_embedding1 = sn_embedding(num_classes, d_conv_dim * 4)
        self.apply(init_weights)
        xavier_uniform_(self.sn_embedding1.weight)

    def forward(self, x, labels):
        h0 = self.opt_block1(x)
        h1 = self.block1(h0)
        h1 = self.self_attn(h1)
        h2 = self.block2(h1)
        h3 = self.block3(h2, downsample=False)
        h3 = self.relu(h3)
        h6 = torch.sum(h3, dim=[2, 3])
        output1 = torch.squeeze(self.snlinear1(h6))
        h_labels = self.sn_embedding1(labels)
        proj = torch.mul(h6, h_labels)
        output2 = torch.sum(proj, dim=[1])
        return output1 + output2


D = Discriminator(d_conv_dim=4, num_classes=3)
real_images = torch.randn(2, 3, 16, 16)
real_labels = torch.tensor([0, 2])
d_out_real = D(real_images, real_labels)
d_loss_real = torch.nn.ReLU()(1.0 - d_out_real).mean()
d_loss_real.backward()
