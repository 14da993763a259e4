# label: safe no-twin
# why: copying "pretrained" weights into parameters with copy_ under no_grad, before the first forward, is the standard loading pattern
import torch
import torch.nn as nn

torch.manual_seed(0)

pretrained = {"weight": torch.randn(3, 4), "bias": torch.zeros(3)}
model = nn.Sequential(nn.Linear(4, 3), nn.Sigmoid())
with torch.no_grad():
    model[0].weight.copy_(pretrained["weight"])
    model[0].bias.copy_(pretrained["bias"])
    model[0].weight.mul_(0.5)

x = torch.randn(2, 4)
out = model(x)
loss = out.sum()
loss.backward()
