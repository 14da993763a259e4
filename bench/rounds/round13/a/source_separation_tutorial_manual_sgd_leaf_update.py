# label: hazard raises
# why: the tutorial's hand-written gradient-descent step updates the Linear layer's leaf Parameters in place (`p -= lr * p.grad`) outside torch.no_grad(), which newer PyTorch rejects.
# source: https://github.com/source-separation/tutorial/issues/18
import torch
from torch import nn

torch.manual_seed(0)


class Line(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(1, 1)

    def forward(self, x):
        y = self.layer(x)
        return y


def make_data(m=2.0, b=-1.0, sigma=0.1, n=100):
    x = torch.randn(n, 1)
    y = m * x + b + sigma * torch.randn(n, 1)
    return x, y


line = Line()
x, y_true = make_data()
learning_rate = 0.1
losses = []
for iteration in range(5):
    line.zero_grad()
    y_pred = line(x)
    loss = ((y_pred - y_true) ** 2).mean()
    loss.backward()
    for n, p in line.named_parameters():
        p -= learning_rate * p.grad  # <-- IPL003: in-place update of a leaf Parameter outside torch.no_grad()
    losses.append(loss.item())
