# label: safe
# why: the pre-ReLU feature list holds `out.clone()`, so the in-place ReLU afterwards does not change the stored distillation features; `out += identity` writes to a BatchNorm output
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(ch)

    def forward(self, x, preact_feats):
        identity = x
        out = self.bn(self.conv(x))
        out += identity
        preact_feats.append(out.clone())
        out.relu_()
        return out


stem = nn.Conv2d(3, 8, 3, padding=1)
blocks = nn.ModuleList(Block() for _ in range(3))
teacher_feats = [torch.randn(2, 8, 6, 6) for _ in range(3)]

x = stem(torch.randn(2, 3, 6, 6))
preact_feats = []
for blk in blocks:
    x = blk(x, preact_feats)
distill = sum(F.mse_loss(s, t) for s, t in zip(preact_feats, teacher_feats))
loss = x.mean() + distill
loss.backward()
grad_stem = stem.weight.grad.clone()
grad_blk0 = blocks[0].conv.weight.grad.clone()
feat_norms = torch.stack([f.detach().norm() for f in preact_feats])
