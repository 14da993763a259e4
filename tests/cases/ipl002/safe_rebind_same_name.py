# label: safe
# why: `x = F.relu(x, inplace=True)` rebinds the same name and nothing else refers to the pre-activation tensor
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 6)
        self.fc2 = nn.Linear(6, 2)

    def forward(self, inp):
        x = self.fc1(inp)
        x = F.relu(x, inplace=True)
        x = F.dropout(x, 0.2, self.training)
        return self.fc2(x)


head = Head()
inp = torch.randn(4, 5)
out = head(inp)
loss = out.logsumexp(-1).mean()
loss.backward()
