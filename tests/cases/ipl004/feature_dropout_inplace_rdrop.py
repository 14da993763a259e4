# label: hazard silent
# why: feature_dropout applies dropout with inplace=True to the caller's features, so the "clean" branch of the consistency loss also sees the dropped features.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

backbone = nn.Linear(10, 24)
head = nn.Linear(24, 4)


def feature_dropout(h, p):
    return F.dropout(h, p, training=True, inplace=True)  # <-- IPL004: h is reused by the caller


x = torch.randn(8, 10)
h = backbone(x)
logits_drop = head(feature_dropout(h, 0.3))
logits_clean = head(h)
consistency = F.kl_div(logits_drop.log_softmax(-1), logits_clean.softmax(-1), reduction="batchmean")
loss = consistency + logits_clean.pow(2).mean()
loss.backward()
