# label: safe
# why: the value network scores a detached copy of the generator's output, so stepping the generator before the value loss's backward touches no graph that backward needs.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(4, 8)
        self.out = nn.Linear(8, 1)

    def forward(self, x, activation=None):
        h = torch.tanh(self.hidden(x))
        output = self.out(h)
        output = activation(output) if activation is not None else output
        return output, h


gen = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 4))
value = Scorer()
g_optimizer = torch.optim.Adam(gen.parameters(), lr=1e-3)
v_optimizer = torch.optim.Adam(value.parameters(), lr=1e-3)


def train_step(z, reward):
    fake = gen(z)
    loss_g = -fake.mean()
    score, _ = value(fake.detach(), torch.sigmoid)
    loss_v = ((score - reward) ** 2).mean()
    loss_g.backward(retain_graph=True)
    g_optimizer.step()
    loss_v.backward()
    v_optimizer.step()
    return loss_g.detach(), loss_v.detach()


loss_g, loss_v = train_step(torch.randn(5, 3), torch.rand(5, 1))
