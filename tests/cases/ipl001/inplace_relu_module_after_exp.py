# label: hazard raises
# why: the inplace ReLU module (defined in __init__) is applied to torch.exp(...), whose output ExpBackward saved
import torch
import torch.nn as nn

torch.manual_seed(0)


class PoissonHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.rate = nn.Linear(5, 2)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        lam = self.act(torch.exp(self.rate(x)))  # <-- IPL001
        return lam


head = PoissonHead()
x = torch.randn(4, 5)
counts = torch.poisson(torch.full((4, 2), 3.0))
lam = head(x)
loss = (lam - counts * torch.log(lam)).mean()
loss.backward()
