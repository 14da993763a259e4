# label: safe no-twin
# why: SAM perturbs the parameters in place (p.add_(e_w)) after the first backward and restores them (p.sub_) after the second, both under torch.no_grad and each time after the graph that saved them was consumed, so no backward ever sees a changed parameter
# source: https://github.com/davda54/sam/blob/03c7768ab858df85f4caae97b23de52d74e99d20/sam.py (usage from the README and example/utility/bypass_bn.py; see https://github.com/davda54/sam/issues/10)
import torch
import torch.nn as nn
from torch.nn.modules.batchnorm import _BatchNorm

torch.manual_seed(0)


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        assert rho >= 0.0, f"Invalid rho, should be non-negative: {rho}"

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
                if p.grad is None: continue
                e_w = p.grad * scale.to(p)
                p.add_(e_w)  # climb to the local maximum "w + e(w)"
                self.state[p]["e_w"] = e_w

        if zero_grad: self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None: continue
                p.sub_(self.state[p]["e_w"])  # get back to "w" from "w + e(w)"

        self.base_optimizer.step()  # do the actual "sharpness-aware" update

        if zero_grad: self.zero_grad()

    def step(self, closure=None):
        raise NotImplementedError("SAM doesn't work like the other optimizers, you should first call `first_step` and the `second_step`; see the documentation for more info.")

    def _grad_norm(self):
        shared_device = self.param_groups[0]["params"][0].device  # put everything on the same device, in case of model parallelism
        norm = torch.norm(
                    torch.stack([
                        p.grad.norm(p=2).to(shared_device)
                        for group in self.param_groups for p in group["params"]
                        if p.grad is not None
                    ]),
                    p=2
               )
        return norm


def disable_running_stats(model):
    def _disable(module):
        if isinstance(module, _BatchNorm):
            module.backup_momentum = module.momentum
            module.momentum = 0

    model.apply(_disable)


def enable_running_stats(model):
    def _enable(module):
        if isinstance(module, _BatchNorm) and hasattr(module, "backup_momentum"):
            module.momentum = module.backup_momentum

    model.apply(_enable)


model = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(inplace=True), nn.Linear(8, 3))
base_optimizer = torch.optim.SGD
optimizer = SAM(model.parameters(), base_optimizer, lr=0.1, momentum=0.9)
loss_function = nn.CrossEntropyLoss()

inputs = torch.randn(10, 6)
targets = torch.randint(0, 3, (10,))

for step in range(2):
    # first forward-backward step
    enable_running_stats(model)
    predictions = model(inputs)
    loss = loss_function(predictions, targets)
    loss.mean().backward()
    optimizer.first_step(zero_grad=True)

    # second forward-backward step
    disable_running_stats(model)
    loss_function(model(inputs), targets).mean().backward()
    optimizer.second_step(zero_grad=True)

first_layer_weight = model[0].weight.detach().clone()
last_loss = loss.detach()
