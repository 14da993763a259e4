# label: hazard raises
# why: the row norms are computed inside torch.no_grad(), but the max-norm division of the weight Parameter happens after the with-block has closed, so it is an in-place write to a grad-requiring leaf.
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(6, 10), nn.ReLU(), nn.Linear(10, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.5)
max_norm = 1.0

x = torch.randn(12, 6)
y = torch.randint(0, 3, (12,))
loss = nn.functional.cross_entropy(model(x), y)
opt.zero_grad()
loss.backward()
opt.step()

for layer in (model[0], model[2]):
    with torch.no_grad():
        norms = layer.weight.norm(dim=1, keepdim=True)
        scale = (norms / max_norm).clamp(min=1.0)
    w = layer.weight
    w.div_(scale)  # <-- IPL003: outside the no_grad block that computed the scale

out = model(x).detach()
