# label: hazard silent
# why: clamping sigmoid's output through .data changes the tensor sigmoid saved for backward without bumping its version, so grads are silently wrong
import torch
import torch.nn as nn

torch.manual_seed(0)
clf = nn.Linear(4, 1)
with torch.no_grad():
    clf.weight.mul_(8.0)   # make saturated probabilities likely

x = torch.randn(16, 4)
y = (torch.rand(16, 1) > 0.5).float()

prob = torch.sigmoid(clf(x))
# "numerical stability": keep log() finite
prob.data.clamp_(0.05, 0.95)  # <-- IPL007
loss = -(y * prob.log() + (1 - y) * (1 - prob).log()).mean()
loss.backward()

weight_grad = clf.weight.grad.clone()
bias_grad = clf.bias.grad.clone()
final_loss = loss.detach()
