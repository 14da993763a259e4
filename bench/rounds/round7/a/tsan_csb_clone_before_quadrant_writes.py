# label: safe
# why: the fix clones x before writing the re-mixed quadrants, so the tensor the DRB conv saved is never touched.
# source: https://github.com/Jee-King/TSAN/issues/3
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DRB(nn.Module):
    def __init__(self, n_feats):
        super(DRB, self).__init__()
        self.conv_1x1 = nn.Conv2d(n_feats, n_feats, kernel_size=1, padding=0, bias=False)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(self.conv_1x1(x))
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
        out = x.clone()
        out[:, :, 0:x.size(2) // 2, 0:x.size(3) // 2] = f_all[:, 0:f_all.size(1) // 4, :, :]
        out[:, :, x.size(2) // 2:, 0:x.size(3) // 2] = f_all[:, f_all.size(1) // 4:f_all.size(1) // 2, :, :]
        out[:, :, 0:x.size(2) // 2, x.size(3) // 2:] = f_all[:, f_all.size(1) // 2:f_all.size(1) * 3 // 4, :, :]
        out[:, :, x.size(2) // 2:, x.size(3) // 2:] = f_all[:, f_all.size(1) * 3 // 4:, :, :]
        return out


class MCAB(nn.Module):
    def __init__(self, n_feats=4):
        super(MCAB, self).__init__()
        self.drb = DRB(n_feats)
        self.csb = CSB(n_feats)
        self.conv3 = nn.Conv2d(n_feats, n_feats, kernel_size=3, padding=1, bias=False)

    def forward(self, x):
        down_b = self.drb(x)
        top_b = self.csb(x)
        top_b = F.sigmoid(self.conv3(top_b))
        return down_b * top_b


class TSAN(nn.Module):
    def __init__(self, n_feats=4):
        super(TSAN, self).__init__()
        self.first_conv = nn.Conv2d(3, n_feats, 1, padding=0, stride=1)
        self.body1 = MCAB(n_feats)
        self.body2 = MCAB(n_feats)
        self.output1 = nn.Conv2d(n_feats, 3, 1)

    def forward(self, x):
        first_out = self.first_conv(x)
        out_dense1 = self.body1(first_out)
        out_dense2 = self.body2(out_dense1)
        return self.output1(out_dense2 + first_out)


model = TSAN()
lr = torch.randn(2, 3, 8, 8)
hr = torch.randn(2, 3, 8, 8)
sr = model(lr)
loss = F.l1_loss(sr, hr)
loss.backward()
