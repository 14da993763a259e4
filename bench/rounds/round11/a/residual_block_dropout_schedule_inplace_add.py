# label: hazard raises
# why: each residual block applies an in-place activation and then `x += residual` on the activation's saved output; the error only surfaced once the dropout rate was raised during training.
# source: https://github.com/pytorch/pytorch/issues/28017
import torch
import torch.nn as nn

torch.manual_seed(0)


class ResBlock(nn.Module):
    def __init__(self, channels, dropout):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, 3, padding=1)
        self.act = nn.ReLU(inplace=True)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        residual = x
        x = self.conv(x)
        x = self.act(x)
        x = self.dropout(x)
        x += residual  # <-- IPL001: when dropout is a no-op (p=0) x is still the ReLU output saved for backward
        return x


class Net(nn.Module):
    def __init__(self, channels=6, n_blocks=3):
        super().__init__()
        self.pre = nn.Conv1d(1, channels, 1)
        self.blocks = nn.ModuleList([ResBlock(channels, 0.1) for _ in range(n_blocks)])
        self.post = nn.Conv1d(channels, 1, 1)

    def forward(self, x):
        x = self.pre(x)
        for block in self.blocks:
            x = block(x)
        return self.post(x)


def set_dropout(model, p):
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = p


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
losses = []
for epoch, p in enumerate([0.1, 0.0]):
    set_dropout(model, p)
    model.train()
    x = torch.randn(2, 1, 16)
    y = torch.randn(2, 1, 16)
    loss = (model(x) - y).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
