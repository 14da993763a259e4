# label: hazard silent
# why: decoupled weight decay is applied through .data between the forward pass and backward, so backprop through the output layer uses the decayed weights the forward never saw.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


model = MLP()
lr, wd = 0.1, 0.5
x = torch.randn(5, 4)
y = torch.randint(0, 2, (5,))

logits = model(x)
loss = F.cross_entropy(logits, y)

for name, p in model.named_parameters():
    if name.endswith("weight"):
        p.data.mul_(1 - lr * wd)  # <-- IPL007

loss.backward()
