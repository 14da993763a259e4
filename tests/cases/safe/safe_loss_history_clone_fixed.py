# label: safe
# why: each history entry is a clone, so the in-place lerp_ of the running loss does not change stored values.
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
inputs = torch.randn(32, 4)
targets = inputs @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]])

smoothed = torch.zeros(())
history = []
for step in range(6):
    batch = torch.randint(0, 32, (8,))
    loss = nn.functional.mse_loss(model(inputs[batch]), targets[batch])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    smoothed.lerp_(loss.detach(), 0.3)
    history.append(smoothed.clone())

loss_curve = torch.stack(history)
