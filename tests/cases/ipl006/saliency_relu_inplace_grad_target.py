# label: hazard silent
# why: F.relu_ rebinds the graph identity of `hidden`; autograd.grad w.r.t. it returns the grad of relu's output (all ones) instead of the pre-activation
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16))
images = torch.randn(5, 8, requires_grad=True)

hidden = encoder(images)
# neuron-level saliency: how much does the summed rectified activation
# change with each pre-activation unit?
score = F.relu_(hidden).sum()  # <-- IPL006
(unit_saliency,) = torch.autograd.grad(score, hidden, retain_graph=True)

active_fraction = (unit_saliency > 0).float().mean()
(input_saliency,) = torch.autograd.grad(score, images)
saliency_map = input_saliency.abs().amax(dim=1)
saliency_map = saliency_map / (saliency_map.max() + 1e-12)
