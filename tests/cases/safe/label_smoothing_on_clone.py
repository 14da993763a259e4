# label: safe
# why: smoothing is applied in place to a clone of the one-hot targets, so the hard-label loss still reads the original one-hot tensor
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
num_classes = 4
eps = 0.1
model = nn.Sequential(nn.Linear(5, 16), nn.GELU(), nn.Linear(16, num_classes))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

x = torch.randn(8, 5)
onehot = F.one_hot(torch.randint(0, num_classes, (8,)), num_classes).float()

soft = onehot.clone()
soft.mul_(1 - eps).add_(eps / num_classes)

logits = model(x)
logp = F.log_softmax(logits, dim=1)
smooth_loss = -(soft * logp).sum(dim=1).mean()
hard_loss = -(onehot * logp).sum(dim=1).mean()
loss = 0.8 * smooth_loss + 0.2 * hard_loss

opt.zero_grad()
loss.backward()
opt.step()

w_after = model[0].weight.detach().clone()
b_grad = model[0].bias.grad.clone()
