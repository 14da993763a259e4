# label: hazard raises no-twin
# why: SKConv calls `.unsqueeze_()` on the branch output, which for branch 0 is the output of a ReLU that autograd saved for backward, bumping its version.
# source: https://github.com/aupendu/zero-restore/issues/7
import torch
import torch.nn as nn

torch.manual_seed(0)

C = 16


class InConv(nn.Module):
    def __init__(self, in_ch, out_ch):
        super(InConv, self).__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, C, 7, stride=4, padding=3, bias=False, padding_mode='reflect'),
            nn.GroupNorm(num_channels=C, num_groups=8, affine=True),
            nn.ReLU(inplace=True)
        )
        self.convf = nn.Sequential(
            nn.Conv2d(C, C, 3, padding=1, bias=False, padding_mode='reflect'),
            nn.GroupNorm(num_channels=C, num_groups=8, affine=True),
            nn.ReLU(inplace=False)
        )

    def forward(self, x):
        R = x[:, 0:1, :, :]
        G = x[:, 1:2, :, :]
        B = x[:, 2:3, :, :]
        xR = torch.unsqueeze(self.conv(R), 1)
        xG = torch.unsqueeze(self.conv(G), 1)
        xB = torch.unsqueeze(self.conv(B), 1)
        x = torch.cat([xR, xG, xB], 1)
        x, _ = torch.min(x, dim=1)
        return self.convf(x)


class SKConv(nn.Module):
    def __init__(self, outfeatures=C, infeatures=1, M=3, L=8):
        super(SKConv, self).__init__()
        self.M = M
        self.convs = nn.ModuleList([])
        in_conv = InConv(in_ch=infeatures, out_ch=outfeatures)
        for i in range(M):
            if i == 0:
                self.convs.append(in_conv)
            else:
                self.convs.append(nn.Sequential(
                    nn.Upsample(scale_factor=1 / (2 ** i), mode='bilinear', align_corners=True),
                    in_conv,
                    nn.Upsample(scale_factor=2 ** i, mode='bilinear', align_corners=True)
                ))
        self.fc = nn.Linear(outfeatures, L)
        self.fcs = nn.ModuleList([])
        for i in range(M):
            self.fcs.append(nn.Linear(L, outfeatures))
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        for i, conv in enumerate(self.convs):
            fea = conv(x).unsqueeze_(dim=1)  # <-- IPL001: in-place unsqueeze_ on a ReLU output saved for backward
            if i == 0:
                feas = fea
            else:
                feas = torch.cat([feas, fea], dim=1)
        fea_U = torch.sum(feas, dim=1)
        fea_s = fea_U.mean(-1).mean(-1)
        fea_z = self.fc(fea_s)
        for i, fc in enumerate(self.fcs):
            vector = fc(fea_z).unsqueeze_(dim=1)
            if i == 0:
                attention_vectors = vector
            else:
                attention_vectors = torch.cat([attention_vectors, vector], dim=1)
        attention_vectors = self.softmax(attention_vectors)
        attention_vectors = attention_vectors.unsqueeze(-1).unsqueeze(-1)
        fea_v = (feas * attention_vectors).sum(dim=1)
        return fea_v


class estimation(nn.Module):
    def __init__(self):
        super(estimation, self).__init__()
        self.InConv = SKConv(outfeatures=C, infeatures=1, M=3, L=8)
        self.OutConv = nn.Conv2d(C, 3, 3, padding=1, stride=1, bias=False, padding_mode='reflect')
        self.up = nn.Upsample(scale_factor=4, mode='bilinear', align_corners=True)

    def forward(self, x):
        xmin = self.InConv(x)
        trans = self.OutConv(self.up(xmin))
        trans = torch.sigmoid(trans) + 1e-12
        return trans


model = estimation()
x = torch.rand(1, 3, 16, 16)
trans = model(x)
loss = ((x - (1 - trans) * 0.8) / trans).abs().mean()
loss.backward()
