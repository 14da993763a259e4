# label: hazard raises
# why: each conv block ends in ReLU(inplace=True) followed by Dropout3d(inplace=True); with dropout_p > 0 the dropout overwrites the ReLU output that ReLU's backward needs
# source: https://github.com/jcreinhold/synthtorch/issues/1
from typing import Optional, Tuple

import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


def get_act(name):
    if name == 'relu':
        return nn.ReLU(inplace=True)
    if name == 'lrelu':
        return nn.LeakyReLU(inplace=True)
    return None


def get_norm3d(name, out_c):
    if name == 'instance':
        return nn.InstanceNorm3d(out_c, affine=True)
    if name == 'batch':
        return nn.BatchNorm3d(out_c)
    return None


class Unet(torch.nn.Module):
    def __init__(self, n_layers: int, kernel_size: int = 3, dropout_p: float = 0, channel_base_power: int = 1,
                 normalization: str = 'instance', activation: str = 'relu'):
        super(Unet, self).__init__()
        self.n_layers = n_layers
        self.kernel_sz = kernel_size
        self.dropout_p = dropout_p
        self.norm = nm = normalization
        self.act = a = activation

        def lc(n): return int(2 ** (channel_base_power + n))  # shortcut to layer count
        self.start = self.__dbl_conv_act(1, lc(0), lc(1), act=(a, a), norm=(nm, nm))
        self.down_layers = nn.ModuleList([self.__dbl_conv_act(lc(n), lc(n), lc(n + 1), act=(a, a), norm=(nm, nm))
                                          for n in range(1, n_layers)])
        self.bridge = self.__dbl_conv_act(lc(n_layers), lc(n_layers), lc(n_layers + 1), act=(a, a), norm=(nm, nm))
        self.up_layers = nn.ModuleList([self.__dbl_conv_act(lc(n) + lc(n - 1), lc(n - 1), lc(n - 1),
                                                            act=(a, a), norm=(nm, nm))
                                        for n in reversed(range(3, n_layers + 2))])
        self.finish = self.__final_conv(lc(2) + lc(1), lc(1), None, a, nm)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.start(x)
        dout = [x]
        x = F.max_pool3d(dout[-1], (2, 2, 2))
        for dl in self.down_layers:
            dout.append(dl(x))
            x = F.max_pool3d(dout[-1], (2, 2, 2))
        x = F.interpolate(self.bridge(x), size=dout[-1].shape[2:])
        for i, (ul, d) in enumerate(zip(self.up_layers, reversed(dout)), 1):
            x = ul(torch.cat((x, d), dim=1))
            x = F.interpolate(x, size=dout[-i - 1].shape[2:])
        x = self.finish(torch.cat((x, dout[0]), dim=1))
        return x

    def __conv(self, in_c: int, out_c: int, kernel_sz: Optional[int] = None) -> nn.Sequential:
        ksz = self.kernel_sz if kernel_sz is None else kernel_sz
        c = nn.Sequential(
            nn.ReplicationPad3d(ksz // 2),
            nn.Conv3d(in_c, out_c, ksz))
        return c

    def __conv_act(self, in_c: int, out_c: int, kernel_sz: Optional[int] = None,
                   act: Optional[str] = None, norm: Optional[str] = None) -> nn.Sequential:
        ksz = self.kernel_sz if kernel_sz is None else kernel_sz
        activation = get_act(act) if act is not None else get_act('relu')
        normalization = get_norm3d(norm, out_c) if norm is not None else get_norm3d('instance', out_c)
        ca = nn.Sequential(
            self.__conv(in_c, out_c, ksz),
            normalization,
            activation,
            nn.Dropout3d(self.dropout_p, inplace=True))  # <-- IPL001: in-place dropout rewrites the ReLU output saved for ReLU's backward
        return ca

    def __dbl_conv_act(self, in_c: int, mid_c: int, out_c: int,
                       kernel_sz: Tuple[Optional[int], Optional[int]] = (None, None),
                       act: Tuple[Optional[str], Optional[str]] = (None, None),
                       norm: Tuple[Optional[str], Optional[str]] = (None, None)) -> nn.Sequential:
        dca = nn.Sequential(
            self.__conv_act(in_c, mid_c, kernel_sz[0], act[0], norm[0]),
            self.__conv_act(mid_c, out_c, kernel_sz[1], act[1], norm[1]))
        return dca

    def __final_conv(self, in_c: int, mid_c: int, kernel_sz: Optional[int] = None,
                     act: Optional[str] = None, norm: Optional[str] = None):
        ca = self.__conv_act(in_c, mid_c, kernel_sz, act, norm)
        c = self.__conv(mid_c, 1, 1)
        return nn.Sequential(ca, c)


model = Unet(n_layers=2, dropout_p=0.2)
src = torch.randn(1, 1, 8, 8, 8)   # e.g. T1-w patch
tgt = torch.randn(1, 1, 8, 8, 8)   # e.g. FLAIR patch
out = model(src)
loss = F.mse_loss(out, tgt)
loss.backward()
