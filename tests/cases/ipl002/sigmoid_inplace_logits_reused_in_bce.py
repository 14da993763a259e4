# label: hazard silent
# why: `probs = logits.sigmoid_()` turns the logits themselves into probabilities, so the BCE-with-logits loss is computed on probabilities
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

clf = nn.Linear(5, 3)
x = torch.randn(6, 5)
labels = (torch.rand(6, 3) > 0.5).float()

logits = clf(x)
probs = logits.sigmoid_()  # <-- IPL002
accuracy = ((probs > 0.5).float() == labels).float().mean()
loss = F.binary_cross_entropy_with_logits(logits, labels)
loss.backward()
