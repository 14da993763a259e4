# label: safe
# why: the exp output is cloned before clamp_, so ExpBackward's saved result is untouched
import torch
import torch.nn as nn

torch.manual_seed(0)

log_var_head = nn.Linear(4, 2)
x = torch.randn(5, 4)

var = torch.exp(log_var_head(x)).clone()
var.clamp_(min=1e-3, max=50.0)
nll = (0.5 * torch.log(var) + 0.5 / var).mean()
nll.backward()
