# label: hazard raises
# why: relu's output shares storage and version counter with its .detach() alias, so rescaling the features through feats.detach().mul_() bumps the version of a tensor relu saved and backward raises.
import torch
import torch.nn as nn

torch.manual_seed(0)

backbone = nn.Sequential(nn.Linear(10, 16))
head = nn.Linear(16, 3)
x = torch.randn(6, 10)
y = torch.randint(0, 3, (6,))

feats = torch.relu(backbone(x))
# "cheap" feature normalisation that is supposed to stay out of autograd
feats.detach().mul_(1.0 / (feats.detach().norm(dim=1, keepdim=True) + 1e-6))  # <-- IPL007: detach() alias still bumps relu's saved output
logits = head(feats)
loss = nn.functional.cross_entropy(logits, y)
loss.backward()
head_grad = head.weight.grad.clone()
