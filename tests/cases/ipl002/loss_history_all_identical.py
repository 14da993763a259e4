# label: hazard silent
# why: the smoothed loss is updated with lerp_ every step, so every entry appended to the history list is the same tensor.
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
    smoothed.lerp_(loss.detach(), 0.3)  # <-- IPL002: earlier history entries alias this tensor
    history.append(smoothed)

loss_curve = torch.stack(history)
