# label: hazard raises
# why: the second SAM forward pass is computed but not assigned, so `loss.backward(retain_graph=True)` re-runs the first graph whose weights first_step() already perturbed in place with p.add_(e_w).
# source: https://github.com/kozistr/pytorch_optimizer/issues/64
import torch
import torch.nn as nn

torch.manual_seed(0)


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        defaults = dict(rho=rho, **kwargs)
        super().__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = self._grad_norm()
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                e_w = p.grad * scale.to(p)
                p.add_(e_w)  # <-- IPL001: perturbs weights saved by the still-pending loss graph
                self.state[p]["e_w"] = e_w
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None or "e_w" not in self.state[p]:
                    continue
                p.sub_(self.state[p]["e_w"])
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()

    def _grad_norm(self):
        return torch.norm(torch.stack([p.grad.norm(p=2) for group in self.param_groups for p in group["params"] if p.grad is not None]), p=2)


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(6, 12), nn.ReLU())
        self.fc = nn.Linear(12, 3)

    def forward(self, x):
        feat = self.features(x)
        return self.fc(feat), feat


models = {"backbone": Backbone()}
optimizers = {"backbone": SAM(models["backbone"].parameters(), torch.optim.SGD, lr=0.1, momentum=0.9)}
criterion = nn.CrossEntropyLoss()
inputs = torch.randn(4, 6)
labels = torch.tensor([0, 1, 2, 1])

loss = criterion(models["backbone"](inputs)[0], labels)

# -----------------SAM Optimizer -------------------
criterion(models["backbone"](inputs)[0], labels)
loss.backward(retain_graph=True)
optimizers["backbone"].first_step(zero_grad=True)

criterion(models["backbone"](inputs)[0], labels)
loss.backward(retain_graph=True)
optimizers["backbone"].second_step(zero_grad=True)
