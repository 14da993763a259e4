# label: safe
# why: Fixed BDRAR constructor: only nn.ReLU modules are switched to inplace, and each one follows a BatchNorm (which does not save its output), while Dropout stays out of place.
# source: https://github.com/zijundeng/BDRAR/issues/2
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class _AttentionModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.block1 = nn.Sequential(
            nn.Conv2d(8, 8, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
        )
        self.down = nn.Sequential(nn.Conv2d(8, 8, 1, bias=False), nn.BatchNorm2d(8))

    def forward(self, x):
        block1 = F.relu(self.block1(x) + self.down(x), True)
        return torch.sigmoid(block1)


class BDRAR(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer0 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.layer1 = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.attention = _AttentionModule()
        self.refine = nn.Sequential(
            nn.Conv2d(16, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU()
        )
        self.predict0 = nn.Sequential(
            nn.Conv2d(8, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
            nn.Dropout(0.1), nn.Conv2d(4, 1, 1)
        )
        self.predict1 = nn.Sequential(
            nn.Conv2d(8, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
            nn.Dropout(0.1), nn.Conv2d(4, 1, 1)
        )

        for m in self.modules():
            if isinstance(m, nn.ReLU):
                m.inplace = True

    def forward(self, x):
        layer0 = self.layer0(x)
        layer1 = self.layer1(layer0)
        att = self.attention(layer1)
        refine = self.refine(torch.cat((layer0, layer1 * att), 1))
        predict0 = self.predict0(layer1)
        predict1 = self.predict1(refine)
        return [predict0, predict1]


net = BDRAR().train()
inputs = torch.randn(2, 3, 8, 8)
labels = (torch.rand(2, 1, 8, 8) > 0.5).float()
bce_logit = nn.BCEWithLogitsLoss()

outputs = net(inputs)
loss = sum(bce_logit(o, labels) for o in outputs)
loss.backward()
