# label: safe
# why: each iteration runs forward, backward, then optimizer.step(); the in-place parameter update happens after the graph that saved them is consumed
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(3, 5), nn.Sigmoid(), nn.Linear(5, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
x = torch.randn(7, 3)
y = torch.randn(7, 1)

for step in range(3):
    pred = model(x)
    loss = (pred - y).pow(2).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
