# label: hazard silent
# why: noise is injected through w.data after the Linear already saved the weight, so backward uses the perturbed weight without any error
import torch
import torch.nn as nn

torch.manual_seed(0)

fc = nn.Linear(4, 3)
x = torch.randn(2, 4, requires_grad=True)

out = fc(x)
w = fc.weight
w.data.add_(0.1 * torch.randn_like(w))  # <-- IPL007
loss = out.pow(2).sum()
loss.backward()
