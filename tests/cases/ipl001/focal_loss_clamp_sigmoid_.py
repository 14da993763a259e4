# label: hazard raises
# why: focal-loss code clamps the sigmoid probabilities in place for numerical safety, corrupting SigmoidBackward's saved output
import torch
import torch.nn as nn

torch.manual_seed(0)


def focal_loss(logits, targets, gamma=2.0, eps=1e-6):
    p = torch.sigmoid(logits)
    p.clamp_(eps, 1.0 - eps)  # <-- IPL001
    pt = torch.where(targets > 0, p, 1 - p)
    return (-(1 - pt) ** gamma * pt.log()).mean()


head = nn.Linear(4, 3)
x = torch.randn(8, 4)
targets = (torch.rand(8, 3) > 0.5).float()
loss = focal_loss(head(x), targets)
loss.backward()
