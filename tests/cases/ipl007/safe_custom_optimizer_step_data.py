# label: safe no-twin
# why: the custom SGD-with-momentum optimizer writes p.data inside its step(), which runs after backward has finished, the conventional optimizer-code use of .data.
import torch
import torch.nn as nn


class MomentumSGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1, momentum=0.9):
        super().__init__(params, dict(lr=lr, momentum=momentum))

    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if "buf" not in st:
                    st["buf"] = p.grad.detach().clone()
                else:
                    st["buf"].mul_(group["momentum"]).add_(p.grad)
                p.data.add_(st["buf"], alpha=-group["lr"])


torch.manual_seed(0)
net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
opt = MomentumSGD(net.parameters(), lr=0.05)
x = torch.randn(16, 3)
y = x.sum(dim=1, keepdim=True)
for _ in range(5):
    loss = nn.functional.mse_loss(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
final_loss = nn.functional.mse_loss(net(x), y).detach()
