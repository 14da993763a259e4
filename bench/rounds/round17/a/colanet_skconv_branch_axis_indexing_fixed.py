# label: safe
# why: the merged fix adds the branch axis with out-of-place indexing ([:, None]) so the ReLU outputs saved for backward are never reshaped in place
# source: https://github.com/MC-E/COLA-Net-Collaborative-Attention-Network-for-Image-Restoration/pull/7 (commit d4abcadd03fdda11efc5c80621233714fdcb4e55)
import torch
from torch import nn

torch.manual_seed(0)


class SKConv(nn.Module):
    def __init__(self, features, M, G, r, stride=1, L=32):
        super(SKConv, self).__init__()
        d = max(int(features / r), L)
        self.M = M
        self.features = features
        self.convs = nn.ModuleList([])
        for i in range(M):
            if i == 0:
                self.convs.append(nn.Sequential(
                    nn.Conv2d(features, features, kernel_size=3, stride=stride, padding=1),
                    nn.BatchNorm2d(features),
                    nn.ReLU(inplace=False)
                ))
            else:
                self.convs.append(nn.Sequential(
                    nn.Conv2d(features, features, 3, 1, 1),
                    nn.BatchNorm2d(features),
                    nn.ReLU(inplace=False),
                    nn.Conv2d(features, features, 3, 1, 1),
                    nn.BatchNorm2d(features),
                    nn.ReLU(inplace=False)
                ))
        self.fc = nn.Linear(features, d)
        self.fcs = nn.ModuleList([])
        for i in range(M):
            self.fcs.append(nn.Linear(d, features))
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        for i, conv in enumerate(self.convs):
            fea = conv(x)[:, None]
            if i == 0:
                feas = fea
            else:
                feas = torch.cat([feas, fea], dim=1)
        fea_U = torch.sum(feas, dim=1)
        fea_s = fea_U.mean(-1).mean(-1)
        fea_z = self.fc(fea_s)
        for i, fc in enumerate(self.fcs):
            vector = fc(fea_z)[:, None]
            if i == 0:
                attention_vectors = vector
            else:
                attention_vectors = torch.cat([attention_vectors, vector], dim=1)
        attention_vectors = self.softmax(attention_vectors)
        attention_vectors = attention_vectors[..., None, None]
        fea_v = (feas * attention_vectors).sum(dim=1)
        return fea_v


class merge_block(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.SKUnit = SKConv(channels, M=2, G=1, r=2, L=4)
        self.body = nn.Conv2d(channels, channels, 3, 1, 1)

    def forward(self, x):
        return x + self.body(self.SKUnit(x))


model = merge_block(8)
noisy = torch.randn(2, 8, 12, 12)
clean = torch.randn(2, 8, 12, 12)
restored = model(noisy)
loss = nn.functional.l1_loss(restored, clean)
loss.backward()
