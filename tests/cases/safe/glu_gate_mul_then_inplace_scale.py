# label: safe
# why: mul saves its two inputs, not its output, so scaling the product in place with mul_ leaves every saved tensor intact; the earlier rescale is out of place.
import torch
import torch.nn as nn

torch.manual_seed(0)

proj = nn.Linear(4, 8)
out_proj = nn.Linear(4, 2)
x = torch.randn(3, 4)
res_scale = 0.5

a, b = proj(x).chunk(2, dim=-1)
gate = torch.sigmoid(b)
gate = gate * 2.0
h = a * gate
h.mul_(res_scale)
out = out_proj(h)
loss = out.pow(2).mean()
loss.backward()
grad_proj = proj.weight.grad
grad_out = out_proj.weight.grad
