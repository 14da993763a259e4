# label: hazard silent
# why: z.div_(temperature) overwrites z in the graph, so loss.backward(inputs=[z]) returns the gradient w.r.t. the scaled logits instead of z.
import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)

encoder = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 5))
x = torch.randn(10, 8)
y = torch.randint(0, 5, (10,))
temperature = 0.2

z = encoder(x)
logits = z.div_(temperature)  # <-- IPL006: z is the backward(inputs=) target
loss = F.cross_entropy(logits, y)
loss.backward(inputs=[z])
z_grad = z.grad
