# label: hazard raises no-twin
# why: the SAM loop keeps the first graph (retain_graph=True) and reuses its predictions for the second loss, but optimizer.first_step() has already perturbed the weights in place (p.add_(e_w)), including the head weight whose [64, 1] transpose that forward saved.
# source: https://github.com/google-research/sam/issues/17
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        defaults = dict(rho=rho, **kwargs)
        super(SAM, self).__init__(params, defaults)
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
                p.add_(e_w)  # climb to the local maximum "w + e(w)"
                self.state[p]["e_w"] = e_w
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.sub_(self.state[p]["e_w"])  # get back to "w" from "w + e(w)"
        self.base_optimizer.step()  # do the actual "sharpness-aware" update
        if zero_grad:
            self.zero_grad()

    def _grad_norm(self):
        return torch.norm(torch.stack([p.grad.norm(p=2) for group in self.param_groups for p in group["params"] if p.grad is not None]), p=2)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 1)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(self.features(x))))


model = Classifier()
base_optimizer = torch.optim.SGD
optimizer = SAM(model.parameters(), base_optimizer, rho=0.05, lr=0.1, momentum=0.9)
inputs = torch.randn(4, 3, 8, 8)
targets = torch.tensor([[1.0], [0.0], [1.0], [0.0]])

# first forward-backward step
predictions = model(inputs)
loss = F.binary_cross_entropy_with_logits(predictions, targets)
loss.backward(retain_graph=True)
optimizer.first_step(zero_grad=True)  # <-- IPL001: perturbs the weights in place before the second backward through the same graph

# second forward-backward step
F.binary_cross_entropy_with_logits(predictions, targets).backward()
optimizer.second_step(zero_grad=True)
