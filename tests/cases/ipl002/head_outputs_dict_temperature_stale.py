# label: hazard silent
# why: out["logits"] holds the same tensor that `logits.div_(T)` scales, so the cross-entropy meant for raw logits trains on temperature-scaled ones
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CalibratedHead(nn.Module):
    def __init__(self, in_ch=8, num_classes=6, temperature=2.5):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(in_ch, num_classes)
        self.temperature = temperature

    def forward(self, feats):
        logits = self.fc(self.pool(feats).flatten(1))
        out = {"logits": logits}
        logits.div_(self.temperature)  # <-- IPL002
        out["probs"] = logits.softmax(-1)
        out["confidence"] = out["probs"].max(-1).values
        return out


backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
head = CalibratedHead()
images = torch.randn(4, 3, 6, 6)
targets = torch.tensor([0, 3, 5, 1])

out = head(backbone(images))
loss = F.cross_entropy(out["logits"], targets)
loss.backward()
confidence = out["confidence"].detach()
grad_fc = head.fc.weight.grad.clone()
grad_backbone = backbone[0].weight.grad.clone()
