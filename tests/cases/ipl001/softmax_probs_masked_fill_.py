# label: hazard raises
# why: masked_fill_ zeroes padded positions of softmax probabilities in place, but SoftmaxBackward saved those probabilities
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

classifier = nn.Linear(6, 7)
feats = torch.randn(3, 6)
pad_mask = torch.tensor([[False] * 5 + [True] * 2] * 3)

logits = classifier(feats)
probs = F.softmax(logits, dim=-1)
probs.masked_fill_(pad_mask, 0.0)  # <-- IPL001
expected = (probs * torch.arange(7.0)).sum(-1)
loss = expected.mean()
loss.backward()
