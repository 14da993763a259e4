# label: hazard silent
# why: the inplace ReLU module rewrites x, so torch.cat([x, out]) concatenates relu(x) twice instead of the raw features and the activation
import torch
import torch.nn as nn

torch.manual_seed(0)


class ConcatAct(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)
        self.head = nn.Conv2d(8, 2, 1)

    def forward(self, img):
        x = self.conv(img)
        out = self.relu(x)  # <-- IPL002
        feats = torch.cat([x, out], dim=1)
        return self.head(feats)


model = ConcatAct()
img = torch.randn(2, 3, 5, 5)
y = model(img)
loss = y.pow(2).mean()
loss.backward()
