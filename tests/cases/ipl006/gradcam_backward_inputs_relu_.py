# label: hazard silent
# why: nnf.relu_(feats) turns feats into the rectified map, so score.backward(inputs=[feats]) fills feats.grad w.r.t. the activation instead of the conv output and negatives are no longer masked.
import torch
import torch.nn as nn
import torch.nn.functional as nnf

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        feats = self.conv(x)
        act = nnf.relu_(feats)  # <-- IPL006: feats is the backward input below
        logits = self.fc(nnf.adaptive_avg_pool2d(act, 1).flatten(1))
        return logits, feats, act


net = Net()
img = torch.randn(1, 3, 5, 5)
logits, feats, act = net(img)
score = logits[0, 2] + 0.5 * logits[0, 0]
score.backward(inputs=[feats])
weights = feats.grad.mean(dim=(2, 3), keepdim=True)
cam = (weights * act.detach()).sum(1)
