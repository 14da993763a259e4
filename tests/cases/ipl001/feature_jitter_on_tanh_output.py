# label: hazard raises
# why: feature_jitter adds noise in place to the tanh output that the caller passed in, but tanh saved that output for its backward, so loss.backward() raises.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

backbone = nn.Linear(10, 16)
classifier = nn.Linear(16, 5)


def feature_jitter(feats, std):
    feats.add_(torch.randn_like(feats) * std)  # <-- IPL001: feats is saved by tanh
    return feats


x = torch.randn(8, 10)
y = torch.randint(0, 5, (8,))
feats = torch.tanh(backbone(x))
logits = classifier(feature_jitter(feats, 0.1))
loss = F.cross_entropy(logits, y)
loss.backward()
