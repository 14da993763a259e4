# label: hazard raises
# why: HRBlock takes x = parallel_res_list[i] (a BasicBlock ReLU output, saved by ReLU and still held in the list) and fuses the other streams into it with `x += up_x` / `x += down_x`
# source: https://github.com/leoxiaobin/deep-high-resolution-net.pytorch/issues/308 (code: https://github.com/abdur75648/UTRNet-High-Resolution-Urdu-Text-Recognition/blob/main/modules/cnn/hrnet.py)
import torch
from torch import nn

torch.manual_seed(0)
BN_MOMENTUM = 0.1


class Conv(nn.Module):
    def __init__(self, in_ch, out_ch, kernel_size=3, stride=1, relued=True):
        super(Conv, self).__init__()
        padding = (kernel_size - 1) // 2
        self.conv_bn = nn.Sequential(
            nn.Conv2d(in_ch, out_ch, kernel_size, stride, padding, bias=False),
            nn.BatchNorm2d(out_ch, momentum=BN_MOMENTUM))
        self.relu = nn.ReLU()
        self.relued = relued

    def forward(self, x):
        x = self.conv_bn(x)
        if self.relued:
            x = self.relu(x)
        return x


class BasicBlock(nn.Module):
    def __init__(self, in_ch, out_ch):
        super(BasicBlock, self).__init__()
        self.conv = nn.Sequential(Conv(in_ch, out_ch), Conv(in_ch, out_ch, relued=False))
        self.relu = nn.ReLU()

    def forward(self, x):
        identity = x
        x = self.conv(x)
        x += identity
        return self.relu(x)


class UpSampling(nn.Module):
    def __init__(self, ch, up_factor):
        super(UpSampling, self).__init__()
        self.up_sampling = nn.Sequential(
            nn.Upsample(scale_factor=up_factor, mode='bilinear', align_corners=False),
            Conv(ch, ch // up_factor, 1, relued=False))

    def forward(self, x):
        return self.up_sampling(x)


class DownSampling(nn.Module):
    def __init__(self, ch, num_samplings):
        super(DownSampling, self).__init__()
        convs = []
        for i in range(num_samplings):
            relued = True if i < num_samplings - 1 else False
            convs.append(Conv(ch, ch * 2, 3, 2, relued=relued))
            ch *= 2
        self.down_sampling = nn.Sequential(*convs)

    def forward(self, x):
        return self.down_sampling(x)


class HRBlock(nn.Module):
    def __init__(self, ch, index, last_stage, block, num_conv_block_per_list=1):
        super(HRBlock, self).__init__()
        self.index = index
        self.last_stage = last_stage
        self.relu = nn.ReLU()
        self.parallel_conv_lists = nn.ModuleList()
        for i in range(index):
            ch_i = ch * 2 ** i
            self.parallel_conv_lists.append(nn.Sequential(*[block(ch_i, ch_i) for _ in range(num_conv_block_per_list)]))
        self.up_conv_lists = nn.ModuleList()
        for i in range(index - 1):
            conv_list = nn.ModuleList()
            for j in range(i + 1, index):
                conv_list.append(UpSampling(ch * 2 ** j, 2 ** (j - i)))
            self.up_conv_lists.append(conv_list)
        self.down_conv_lists = nn.ModuleList()
        for i in range(1, index if last_stage else index + 1):
            conv_list = nn.ModuleList()
            for j in range(i):
                conv_list.append(DownSampling(ch * 2 ** j, i - j))
            self.down_conv_lists.append(conv_list)

    def forward(self, x_list):
        parallel_res_list = []
        for i in range(self.index):
            x = x_list[i]
            x = self.parallel_conv_lists[i](x)
            parallel_res_list.append(x)

        final_res_list = []
        for i in range(self.index if self.last_stage else self.index + 1):
            if i == self.index:
                x = 0
                for t, m in zip(parallel_res_list, self.down_conv_lists[-1]):
                    x += m(t)
            else:
                x = parallel_res_list[i]
                if i != self.index - 1:
                    res_list = parallel_res_list[i + 1:]
                    up_x = 0
                    for t, m in zip(res_list, self.up_conv_lists[i]):
                        up_x += m(t)
                    x += up_x  # <-- IPL001, IPL002: x is the saved ReLU output still stored in parallel_res_list
                if i != 0:
                    res_list = parallel_res_list[:i]
                    down_x = 0
                    for t, m in zip(res_list, self.down_conv_lists[i - 1]):
                        down_x += m(t)
                    x += down_x  # <-- IPL001, IPL002: same aliasing for the downsampled streams
            x = self.relu(x)
            final_res_list.append(x)
        return final_res_list


hr_block = HRBlock(ch=4, index=2, last_stage=False, block=BasicBlock)
x_list = [torch.randn(2, 4, 8, 8), torch.randn(2, 8, 4, 4)]
outs = hr_block(x_list)
loss = sum(o.mean() for o in outs)
loss.backward()
