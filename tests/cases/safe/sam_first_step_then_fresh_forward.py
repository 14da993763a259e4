# label: safe no-twin
# why: the second backward goes through a fresh forward at the perturbed weights, as sharpness-aware minimisation intends, so no graph needs the weights first_step() moved.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        super().__init__(params, dict(rho=rho, **kwargs))
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups

    @torch.no_grad()
    def first_step(self):
        norm = torch.norm(torch.stack([p.grad.norm() for g in self.param_groups for p in g["params"]]))
        for group in self.param_groups:
            for p in group["params"]:
                e_w = p.grad * (group["rho"] / (norm + 1e-12))
                p.add_(e_w)
                self.state[p]["e_w"] = e_w
        self.zero_grad()

    @torch.no_grad()
    def second_step(self):
        for group in self.param_groups:
            for p in group["params"]:
                p.sub_(self.state[p]["e_w"])
        self.base_optimizer.step()
        self.zero_grad()


model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = SAM(model.parameters(), torch.optim.SGD, lr=0.1)
x = torch.randn(6, 4)
y = torch.randn(6, 1)
pred = model(x)
F.mse_loss(pred, y).backward()
optimizer.first_step()
F.mse_loss(model(x), y).backward()
optimizer.second_step()
