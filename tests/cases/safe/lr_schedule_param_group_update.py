# label: safe no-twin
# why: `group["lr"] *= gamma` updates a float in the optimizer's param_groups dict, an intended state update rather than a tensor write
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.2)
x = torch.randn(8, 3)
y = torch.randn(8, 1)
gamma = 0.5

for epoch in range(3):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    for group in opt.param_groups:
        group["lr"] *= gamma
final_lr = opt.param_groups[0]["lr"]
