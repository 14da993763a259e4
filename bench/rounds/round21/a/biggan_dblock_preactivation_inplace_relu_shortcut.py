# label: hazard silent
# why: with preactivation, DBlock.forward runs the discriminator's inplace ReLU on its input x, and shortcut(x) later reads that same tensor, so the skip path silently sees relu(x) instead of x (no version error because nothing saved x).
# source: https://github.com/ajbrock/BigGAN-PyTorch/commit/96e9112c620f22f5dd6302b57656a4dd2624d65c
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DBlock(nn.Module):
  def __init__(self, in_channels, out_channels, which_conv=nn.Conv2d, wide=True,
               preactivation=False, activation=None, downsample=None,):
    super(DBlock, self).__init__()
    self.in_channels, self.out_channels = in_channels, out_channels
    self.hidden_channels = self.out_channels if wide else self.in_channels
    self.which_conv = which_conv
    self.preactivation = preactivation
    self.activation = activation
    self.downsample = downsample

    self.conv1 = self.which_conv(self.in_channels, self.hidden_channels)
    self.conv2 = self.which_conv(self.hidden_channels, self.out_channels)
    self.learnable_sc = True if (in_channels != out_channels) or downsample else False
    if self.learnable_sc:
      self.conv_sc = self.which_conv(in_channels, out_channels,
                                     kernel_size=1, padding=0)

  def shortcut(self, x):
    if self.preactivation:
      if self.learnable_sc:
        x = self.conv_sc(x)
      if self.downsample:
        x = self.downsample(x)
    else:
      if self.downsample:
        x = self.downsample(x)
      if self.learnable_sc:
        x = self.conv_sc(x)
    return x

  def forward(self, x):
    if self.preactivation:
      h = self.activation(x)  # <-- IPL002
    else:
      h = x
    h = self.conv1(h)
    h = self.conv2(self.activation(h))
    if self.downsample:
      h = self.downsample(h)

    return h + self.shortcut(x)


class Discriminator(nn.Module):
  def __init__(self, D_ch=8, D_activation=nn.ReLU(inplace=True)):
    super(Discriminator, self).__init__()
    self.activation = D_activation
    self.which_conv = functools.partial(nn.Conv2d, kernel_size=3, padding=1)
    arch = {'in_channels': [3, D_ch, D_ch * 2], 'out_channels': [D_ch, D_ch * 2, D_ch * 2],
            'downsample': [True, True, False]}
    self.blocks = nn.ModuleList()
    for index in range(len(arch['out_channels'])):
      self.blocks += [DBlock(in_channels=arch['in_channels'][index],
                             out_channels=arch['out_channels'][index],
                             which_conv=self.which_conv,
                             wide=True,
                             activation=self.activation,
                             preactivation=(index > 0),
                             downsample=(nn.AvgPool2d(2) if arch['downsample'][index] else None))]
    self.linear = nn.Linear(arch['out_channels'][-1], 1)

  def forward(self, x):
    h = x
    for block in self.blocks:
      h = block(h)
    h = torch.sum(self.activation(h), [2, 3])
    return self.linear(h)


def main():
  D = Discriminator()
  x = torch.randn(2, 3, 16, 16)
  out = D(x)
  loss = F.softplus(-out).mean()
  loss.backward()
  return out.detach(), D.blocks[1].conv_sc.weight.grad, D.blocks[0].conv1.weight.grad


d_out, sc_grad, conv1_grad = main()
