# label: safe
# why: torch.clamp(y_raw, min=0) only cleans negative noise out of regression targets that carry no gradient, so its behaviour at exactly 0 can never reach a gradient.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Linear(3, 1)
x = torch.randn(12, 3)
y_raw = torch.randn(12, 1)
y_raw[::3] = 0.0
y = torch.clamp(y_raw, min=0)

pred = F.softplus(model(x))
loss = F.mse_loss(pred, y)
loss.backward()
w_grad = model.weight.grad.clone()
