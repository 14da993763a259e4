# label: safe
# why: add_ writes into the output of the zero-initialised BatchNorm closing self.convs, which BatchNorm's backward does not need, and the inplace ReLU then acts on that sum.
# source: https://github.com/fastai/fastai_dev/issues/109
import torch
import torch.nn as nn

torch.manual_seed(0)

act_fn = nn.ReLU(inplace=True)


def noop(x):
    return x


def conv(ni, nf, ks=3, stride=1, bias=False):
    return nn.Conv2d(ni, nf, kernel_size=ks, stride=stride, padding=ks // 2, bias=bias)


def init_cnn(m):
    if getattr(m, 'bias', None) is not None:
        nn.init.constant_(m.bias, 0)
    if isinstance(m, (nn.Conv2d, nn.Linear)):
        nn.init.kaiming_normal_(m.weight)
    for l in m.children():
        init_cnn(l)


def conv_layer(ni, nf, ks=3, stride=1, zero_bn=False, act=True):
    bn = nn.BatchNorm2d(nf)
    nn.init.constant_(bn.weight, 0. if zero_bn else 1.)
    layers = [conv(ni, nf, ks, stride=stride), bn]
    if act:
        layers.append(act_fn)
    return nn.Sequential(*layers)


class ResBlock(nn.Module):
    def __init__(self, expansion, ni, nh, stride=1):
        super().__init__()
        nf, ni = nh * expansion, ni * expansion
        layers = [conv_layer(ni, nh, 3, stride=stride),
                  conv_layer(nh, nf, 3, zero_bn=True, act=False)
                  ] if expansion == 1 else [
                  conv_layer(ni, nh, 1),
                  conv_layer(nh, nh, 3, stride=stride),
                  conv_layer(nh, nf, 1, zero_bn=True, act=False)]
        self.convs = nn.Sequential(*layers)
        self.idconv = noop if ni == nf else conv_layer(ni, nf, 1, act=False)
        self.pool = noop if stride == 1 else nn.AvgPool2d(2, ceil_mode=True)

    def forward(self, x):
        return act_fn(self.convs(x).add_(self.idconv(self.pool(x))))


class XResNet(nn.Sequential):
    @classmethod
    def create(cls, expansion, layers, c_in=3, c_out=4):
        nfs = [c_in, 8, 8]
        stem = [conv_layer(nfs[i], nfs[i + 1], stride=2 if i == 0 else 1) for i in range(2)]
        nfs = [8 // expansion, 8, 16]
        res_layers = [cls._make_layer(expansion, nfs[i], nfs[i + 1], n_blocks=l, stride=1 if i == 0 else 2)
                      for i, l in enumerate(layers)]
        res = cls(*stem, nn.MaxPool2d(kernel_size=3, stride=2, padding=1), *res_layers,
                  nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(nfs[-1] * expansion, c_out))
        init_cnn(res)
        return res

    @staticmethod
    def _make_layer(expansion, ni, nf, n_blocks, stride):
        return nn.Sequential(*[ResBlock(expansion, ni if i == 0 else nf, nf, stride if i == 0 else 1)
                               for i in range(n_blocks)])


model = XResNet.create(1, [1, 1])
xb = torch.randn(2, 3, 16, 16)
yb = torch.tensor([1, 3])
loss = nn.functional.cross_entropy(model(xb), yb)
loss.backward()
