# label: safe
# why: center_ mutates its argument, but every caller passes a fresh Linear output and never reads the argument again.
import torch
from torch import nn
from torch.nn.functional import relu

torch.manual_seed(0)


def center_(t):
    t.sub_(t.mean(dim=0, keepdim=True))
    return t


class ProjectionHead(nn.Module):
    def __init__(self, dim, out_dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, out_dim)

    def forward(self, x):
        h = center_(self.fc1(x))
        return center_(self.fc2(relu(h)))


head = ProjectionHead(6, 4)
view_a = torch.randn(8, 6)
view_b = view_a + 0.1 * torch.randn(8, 6)
za = head(view_a)
zb = head(view_b)
loss = (za - zb).pow(2).sum(dim=1).mean()
loss.backward()
