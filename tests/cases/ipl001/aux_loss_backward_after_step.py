# label: hazard raises no-twin
# why: optimizer.step() updates the Linear weights in place between the forward and aux_loss.backward(), which still needs the saved weights
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
world_size = 2
max_norm = 1.0
running_loss = 0.0

for step in range(4):
    x = torch.randn(4, 8)
    y = torch.randn(4, 1)
    out = model(x)
    loss = F.mse_loss(out, y)
    aux_loss = out.pow(2).mean() * 0.01
    loss.backward(retain_graph=True)
    running_loss += loss.item()
    for p in model.parameters():
        if p.grad is not None:
            p.grad.mul_(1.0 / world_size)
    total_norm = torch.stack([p.grad.norm() for p in model.parameters()]).norm()
    clip_coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
    for p in model.parameters():
        p.grad.mul_(clip_coef)
    optimizer.step()  # <-- IPL001
    aux_loss.backward()
    optimizer.zero_grad(set_to_none=True)

final_params = [p.detach().clone() for p in model.parameters()]
final_out = model(torch.ones(2, 8))
