# label: safe
# why: F.relu(..., inplace=True) is applied to a fresh clone of the leaf and nothing saved the clone's old value, so the gradient equals the out-of-place one
# source: https://github.com/pytorch/pytorch/issues/1029
import torch
from torch.nn import functional as F

torch.manual_seed(0)
inp = torch.randn(5, 5)

var = inp.clone().requires_grad_(True)
var2 = var.clone()

F.relu(var2, inplace=True)

loss = var2.sum()
loss.backward()
grad_inplace = var.grad

var_copy = inp.clone().requires_grad_(True)
out = F.relu(var_copy, inplace=False)
loss2 = out.sum()
loss2.backward()
grad_outplace = var_copy.grad
