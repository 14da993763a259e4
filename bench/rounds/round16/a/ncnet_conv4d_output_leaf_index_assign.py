# label: hazard raises
# why: conv4d allocates its output as a fresh Variable with requires_grad=data.requires_grad (a leaf that requires grad) and then fills it slice by slice in place.
# source: https://github.com/ignacio-rocco/ncnet/issues/12
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
from torch.nn.modules.conv import _ConvNd
from torch.nn.modules.utils import _quadruple

torch.manual_seed(0)


def conv4d(data, filters, bias=None, permute_filters=True, use_half=False):
    b, c, h, w, d, t = data.size()

    data = data.permute(2, 0, 1, 3, 4, 5).contiguous()

    if permute_filters:
        filters = filters.permute(2, 0, 1, 3, 4, 5).contiguous()

    c_out = filters.size(1)
    if use_half:
        output = Variable(torch.HalfTensor(h, b, c_out, w, d, t), requires_grad=data.requires_grad)
    else:
        output = Variable(torch.zeros(h, b, c_out, w, d, t), requires_grad=data.requires_grad)

    padding = filters.size(0) // 2
    if use_half:
        Z = Variable(torch.zeros(padding, b, c, w, d, t).half())
    else:
        Z = Variable(torch.zeros(padding, b, c, w, d, t))

    data_padded = torch.cat((Z, data, Z), 0)

    for i in range(output.size(0)):
        output[i, :, :, :, :, :] = F.conv3d(data_padded[i + padding, :, :, :, :, :],  # <-- IPL003: writes into a leaf created with requires_grad=True
                                            filters[padding, :, :, :, :, :], bias=bias, stride=1, padding=padding)
        for p in range(1, padding + 1):
            output[i, :, :, :, :, :] = output[i, :, :, :, :, :] + F.conv3d(data_padded[i + padding - p, :, :, :, :, :],  # <-- IPL003: writes into a leaf created with requires_grad=True
                                                                           filters[padding - p, :, :, :, :, :], bias=None, stride=1, padding=padding)
            output[i, :, :, :, :, :] = output[i, :, :, :, :, :] + F.conv3d(data_padded[i + padding + p, :, :, :, :, :],  # <-- IPL003: writes into a leaf created with requires_grad=True
                                                                           filters[padding + p, :, :, :, :, :], bias=None, stride=1, padding=padding)

    output = output.permute(1, 2, 0, 3, 4, 5).contiguous()
    return output


class Conv4d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, bias=True, pre_permuted_filters=True):
        stride = 1
        dilation = 1
        groups = 1
        padding = 0
        kernel_size = _quadruple(kernel_size)
        stride = _quadruple(stride)
        padding = _quadruple(padding)
        dilation = _quadruple(dilation)
        super(Conv4d, self).__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                                     False, _quadruple(0), groups, bias, 'zeros')
        self.pre_permuted_filters = pre_permuted_filters
        if self.pre_permuted_filters:
            self.weight.data = self.weight.data.permute(2, 0, 1, 3, 4, 5).contiguous()
        self.use_half = False

    def forward(self, input):
        return conv4d(input, self.weight, bias=self.bias, permute_filters=not self.pre_permuted_filters,
                      use_half=self.use_half)


class NeighConsensus(torch.nn.Module):
    def __init__(self, kernel_sizes=[3, 3], channels=[4, 1], symmetric_mode=True):
        super(NeighConsensus, self).__init__()
        self.symmetric_mode = symmetric_mode
        self.kernel_sizes = kernel_sizes
        self.channels = channels
        num_layers = len(kernel_sizes)
        nn_modules = list()
        for i in range(num_layers):
            if i == 0:
                ch_in = 1
            else:
                ch_in = channels[i - 1]
            ch_out = channels[i]
            k_size = kernel_sizes[i]
            nn_modules.append(Conv4d(in_channels=ch_in, out_channels=ch_out, kernel_size=k_size, bias=True))
            nn_modules.append(nn.ReLU(inplace=True))
        self.conv = nn.Sequential(*nn_modules)

    def forward(self, x):
        if self.symmetric_mode:
            x = self.conv(x) + self.conv(x.permute(0, 1, 4, 5, 2, 3)).permute(0, 1, 4, 5, 2, 3)
        else:
            x = self.conv(x)
        return x


def MutualMatching(corr4d):
    batch_size, ch, fs1, fs2, fs3, fs4 = corr4d.size()
    corr4d_B = corr4d.view(batch_size, fs1 * fs2, fs3, fs4)
    corr4d_A = corr4d.view(batch_size, fs1, fs2, fs3 * fs4)
    corr4d_B_max, _ = torch.max(corr4d_B, dim=1, keepdim=True)
    corr4d_A_max, _ = torch.max(corr4d_A, dim=3, keepdim=True)
    eps = 1e-5
    corr4d_B = corr4d_B / (corr4d_B_max + eps)
    corr4d_A = corr4d_A / (corr4d_A_max + eps)
    corr4d_B = corr4d_B.view(batch_size, 1, fs1, fs2, fs3, fs4)
    corr4d_A = corr4d_A.view(batch_size, 1, fs1, fs2, fs3, fs4)
    corr4d = corr4d * (corr4d_A * corr4d_B)
    return corr4d


feature_A = F.normalize(torch.randn(1, 6, 4, 4), dim=1)
feature_B = F.normalize(torch.randn(1, 6, 4, 4), dim=1)
corr4d = torch.einsum('bchw,bcij->bhwij', feature_A, feature_B).unsqueeze(1)
neigh_consensus = NeighConsensus()
corr4d = MutualMatching(corr4d)
corr4d = neigh_consensus(corr4d)
corr4d = MutualMatching(corr4d)
score = corr4d.mean()
score.backward()
