# label: safe
# why: the in-place post-processing (logit shift, clamp_, masked_fill_, +=) runs under torch.no_grad(), so no graph records it
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(5, 6), nn.Tanh(), nn.Linear(6, 4))
x = torch.randn(3, 5)
y = torch.tensor([0, 3, 1])
loss = F.cross_entropy(model(x), y)
loss.backward()

banned = torch.tensor([False, False, True, False])
with torch.no_grad():
    logits = torch.sigmoid(model(x))
    logits.sub_(0.5)
    logits.mul_(10.0)
    logits.masked_fill_(banned, -1e4)
    probs = logits.softmax(-1)
    probs.clamp_(min=1e-6)
    probs /= probs.sum(-1, keepdim=True)
    preds = probs.argmax(-1)
