# label: safe
# why: the running-mean buffer is updated with torch.add(..., out=) and mul_ under no_grad from detached batch statistics; it never requires grad and no graph saved it.
import torch
import torch.nn as nn

torch.manual_seed(0)

enc = nn.Linear(4, 3)
head = nn.Linear(3, 1)
momentum = 0.1
running_mean = torch.zeros(3)

for step in range(3):
    x = torch.randn(5, 4)
    feats = enc(x)
    with torch.no_grad():
        batch_mean = feats.detach().mean(dim=0)
        running_mean.mul_(1 - momentum)
        torch.add(running_mean, batch_mean, alpha=momentum, out=running_mean)

centered = feats - running_mean
out = head(centered)
loss = out.pow(2).mean()
loss.backward()
grad_enc = enc.weight.grad
