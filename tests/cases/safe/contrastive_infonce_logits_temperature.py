# label: safe
# why: logits come from a matmul (which saves its inputs, not its output), so dividing by the temperature and subtracting the row max in place is fine
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 16))
opt = torch.optim.Adam(encoder.parameters(), lr=1e-3)
temperature = 0.1

x = torch.randn(8, 10)
view1 = x + 0.1 * torch.randn_like(x)
view2 = x + 0.1 * torch.randn_like(x)

z1 = F.normalize(encoder(view1), dim=1)
z2 = F.normalize(encoder(view2), dim=1)
logits = z1 @ z2.t()
logits /= temperature
logits -= logits.max(dim=1, keepdim=True).values.detach()

labels = torch.arange(logits.size(0))
loss = 0.5 * (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels))

opt.zero_grad()
loss.backward()
enc_grad = encoder[0].weight.grad.clone()
opt.step()
enc_w = encoder[0].weight.detach().clone()
