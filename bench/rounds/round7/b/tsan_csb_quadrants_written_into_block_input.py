# label: hazard raises
# why: CSB sets out = x and writes the four re-mixed quadrants into it, i.e. into MCAB's input, which the dense branch (DRB) convolutions had already saved for backward.
# source: https://github.com/Jee-King/TSAN/issues/3
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class make_dense(nn.Module):
    def __init__(self, nChannels, growthRate, i, kernel_size=3):
        super(make_dense, self).__init__()
        self.conv = nn.Conv2d(nChannels, growthRate, kernel_size=kernel_size, padding=(kernel_size - 1) // 2,
                              bias=False)

    def forward(self, x):
        out = F.relu(self.conv(x))
        out = torch.cat((x, out), 1)
        return out


class DRB(nn.Module):
    def __init__(self, n_channels, n_denselayer=2, n_feats=8):
        super(DRB, self).__init__()
        nChannels_ = n_channels
        modules = []
        for i in range(n_denselayer):
            modules.append(make_dense(nChannels_, n_feats, i))
            nChannels_ += n_feats
        self.dense_layers = nn.Sequential(*modules)
        self.conv_1x1 = nn.Conv2d(nChannels_, n_feats, kernel_size=1, padding=0, bias=False)

    def forward(self, x):
        out = self.dense_layers(x)
        out = self.conv_1x1(out)
        out = x + out
        return out


class CSB(nn.Module):
    def __init__(self, n_feats):
        super(CSB, self).__init__()
        self.conv1 = nn.Conv2d(n_feats * 4, n_feats * 4, kernel_size=1, padding=0, bias=False)

    def forward(self, x):
        f1 = x[:, :, 0:x.size(2) // 2, 0:x.size(3) // 2]
        f2 = x[:, :, x.size(2) // 2:, 0:x.size(3) // 2]
        f3 = x[:, :, 0:x.size(2) // 2, x.size(3) // 2:]
        f4 = x[:, :, x.size(2) // 2:, x.size(3) // 2:]
        f_all = torch.cat([f1, f2, f3, f4], 1)
        f_all = self.conv1(f_all)
        out = x
        out[:, :, 0:x.size(2) // 2, 0:x.size(3) // 2] = f_all[:, 0:f_all.size(1) // 4, :, :]  # <-- IPL001, IPL004: writes into the block input x
        out[:, :, x.size(2) // 2:, 0:x.size(3) // 2] = f_all[:, f_all.size(1) // 4:f_all.size(1) // 2, :, :]  # <-- IPL001, IPL004: writes into the block input x
        out[:, :, 0:x.size(2) // 2, x.size(3) // 2:] = f_all[:, f_all.size(1) // 2:f_all.size(1) * 3 // 4, :, :]  # <-- IPL001, IPL004: writes into the block input x
        out[:, :, x.size(2) // 2:, x.size(3) // 2:] = f_all[:, f_all.size(1) * 3 // 4:, :, :]  # <-- IPL001, IPL004: writes into the block input x
        return out


class First_Order(nn.Module):
    def __init__(self):
        super(First_Order, self).__init__()
        self.adaptive = nn.AdaptiveAvgPool2d((1, 1))

    def forward(self, x):
        first_c = torch.sigmoid(self.adaptive(x))
        first_c = first_c * x
        xh = x.permute(0, 2, 1, 3)
        first_h = torch.sigmoid(self.adaptive(xh))
        first_h = (first_h * xh).permute(0, 2, 1, 3)
        xw = x.permute(0, 3, 2, 1)
        first_w = torch.sigmoid(self.adaptive(xw))
        first_w = (first_w * xw).permute(0, 3, 2, 1)
        return first_c + first_h + first_w + x


class MCAB(nn.Module):
    def __init__(self, n_channels, n_denselayer=2, n_feats=8):
        super(MCAB, self).__init__()
        self.drb = DRB(n_channels, n_denselayer, n_feats)
        self.csb = CSB(n_feats)
        self.first = First_Order()
        self.conv3 = nn.Conv2d(n_feats, n_feats, kernel_size=3, padding=1, bias=False)

    def forward(self, x):
        down_b = self.drb(x)
        top_b = self.csb(x)
        top_b = self.first(top_b)
        top_b = torch.sigmoid(self.conv3(top_b))
        return down_b * top_b


class TSAN(nn.Module):
    def __init__(self, n_colors=3, n_feats=8):
        super(TSAN, self).__init__()
        self.first_conv = nn.Conv2d(n_colors, n_feats, 1, padding=0, stride=1)
        self.relu = nn.ReLU(inplace=True)
        self.body1 = MCAB(n_feats, 2, n_feats)
        self.body2 = MCAB(n_feats, 2, n_feats)
        self.tail = nn.Conv2d(n_feats * 2, n_feats, 1)
        self.output1 = nn.Conv2d(n_feats, n_colors, 1)

    def forward(self, x):
        first_out = self.relu(self.first_conv(x))
        out_dense1 = self.body1(first_out)
        out_dense2 = self.body2(out_dense1)
        dense = torch.cat([out_dense1, out_dense2], 1)
        out = self.tail(dense)
        out = out + first_out
        return self.output1(out)


net = TSAN()
lr = torch.randn(2, 3, 8, 8)
hr = torch.randn(2, 3, 8, 8)
loss = F.l1_loss(net(lr), hr)
loss.backward()
