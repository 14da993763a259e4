# label: hazard silent
# why: h.sigmoid_() is called inline, so backward(inputs=[h]) accumulates the gradient w.r.t. the sigmoid output, not the pre-activation
import torch
import torch.nn as nn

torch.manual_seed(0)

enc = nn.Linear(4, 3)
head = nn.Linear(3, 1)
x = torch.randn(5, 4)

h = enc(x)
out = head(h.sigmoid_())  # <-- IPL006
out.sum().backward(inputs=[h])
saliency = h.grad.abs().sum(dim=0)
