# label: safe no-twin
# why: nn.init.*_ functions and `bias.zero_()` under no_grad in __init__ write parameters before any graph exists
import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4, 2)
        self.scale = nn.Parameter(torch.empty(4))
        nn.init.kaiming_normal_(self.conv.weight, mode="fan_out", nonlinearity="relu")
        nn.init.zeros_(self.conv.bias)
        nn.init.trunc_normal_(self.fc.weight, std=0.02)
        nn.init.ones_(self.scale)
        with torch.no_grad():
            self.fc.bias.zero_()

    def forward(self, x):
        h = torch.relu(self.conv(x)) * self.scale.view(1, -1, 1, 1)
        return self.fc(h.mean((2, 3)))


net = Net()
x = torch.randn(2, 3, 4, 4)
loss = net(x).sum()
loss.backward()
