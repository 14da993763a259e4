# label: safe
# why: every in-place write (grad clamping, optimizer step) happens after backward() of the graph that saved the parameters, and each iteration builds a fresh graph.
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(3, 16), nn.Sigmoid(), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
data = [(torch.randn(8, 3), torch.randn(8, 1)) for _ in range(4)]

for xb, yb in data:
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(xb), yb)
    loss.backward()
    for p in model.parameters():
        p.grad.clamp_(-0.5, 0.5)
    opt.step()

final_loss = nn.functional.mse_loss(model(data[0][0]), data[0][1])
final_loss.backward()
