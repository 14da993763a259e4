# label: hazard silent
# why: y = torch.tanh_(h) rebinds h's identity to the tanh output, so every Jacobian row taken w.r.t. h is a one-hot row instead of 1 - tanh(h)^2.
import torch
import torch.nn as nn
from torch.autograd import grad as agrad

torch.manual_seed(0)


def layer_jacobian(y, wrt):
    rows = []
    for i in range(y.shape[1]):
        (row,) = agrad(y[:, i].sum(), wrt, retain_graph=True)
        rows.append(row)
    return torch.stack(rows, dim=1)


enc = nn.Linear(4, 3)
x = torch.randn(2, 4)
h = enc(x)
y = torch.tanh_(h)  # <-- IPL006: h is the Jacobian's input
J = layer_jacobian(y, h)
jac_norm = J.norm()
