# label: hazard silent
# why: first = x[:, 0] is a view; scaling x in place afterwards changes what `first` holds when it is read for the objectness loss
import torch
import torch.nn as nn

torch.manual_seed(0)

head = nn.Linear(4, 3)
feats = torch.randn(5, 4)
targets = torch.rand(5)

x = head(feats)
first = x[:, 0]
x.mul_(2.0)  # <-- IPL002
obj_loss = (first - targets).pow(2).mean()
reg_loss = x[:, 1:].abs().mean()
loss = obj_loss + reg_loss
loss.backward()
