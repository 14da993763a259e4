# label: safe
# why: backbone features are computed under no_grad from frozen weights, so relu_/mul_ on them touch no graph; only the head is trained
import torch
import torch.nn as nn

torch.manual_seed(0)

backbone = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.Sigmoid())
for p in backbone.parameters():
    p.requires_grad = False
head = nn.Linear(4, 2)
images = torch.randn(2, 3, 5, 5)

with torch.no_grad():
    feats = backbone(images)
feats.sub_(0.5)
feats.relu_()
pooled = feats.mean((2, 3))
pooled.mul_(4.0)
logits = head(pooled)
loss = nn.functional.cross_entropy(logits, torch.tensor([1, 0]))
loss.backward()
