# label: hazard raises
# why: diff ** 2 saved diff for backward, and abs_() overwrites diff to reuse it for the MAE term.
import torch
import torch.nn as nn

torch.manual_seed(0)


def mixed_loss(pred, target, alpha=0.5):
    diff = pred - target
    mse = (diff ** 2).mean()
    diff.abs_()  # <-- IPL001: pow saved diff
    mae = diff.mean()
    return alpha * mse + (1 - alpha) * mae


net = nn.Linear(3, 2)
x = torch.randn(9, 3)
y = torch.randn(9, 2)
loss = mixed_loss(net(x), y)
loss.backward()
