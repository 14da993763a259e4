# label: hazard raises no-twin
# why: both forward passes are run before any backward, so SAM.first_step's in-place p.add_(e_w) perturbs the weights that the second forward's graph saved for backward, and manual_backward(loss_2) fails with "modified by an inplace operation".
# source: https://github.com/davda54/sam/issues/36
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, adaptive=False, **kwargs):
        defaults = dict(rho=rho, adaptive=adaptive, **kwargs)
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
                self.state[p]["old_p"] = p.data.clone()
                e_w = (torch.pow(p, 2) if group["adaptive"] else 1.0) * p.grad * scale.to(p)
                p.add_(e_w)  # climb to the local maximum "w + e(w)"
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.data = self.state[p]["old_p"]  # get back to "w" from "w + e(w)"
        self.base_optimizer.step()  # do the actual "sharpness-aware" update
        if zero_grad:
            self.zero_grad()

    def _grad_norm(self):
        shared_device = self.param_groups[0]["params"][0].device
        norm = torch.norm(
            torch.stack([
                ((torch.abs(p) if group["adaptive"] else 1.0) * p.grad).norm(p=2).to(shared_device)
                for group in self.param_groups for p in group["params"]
                if p.grad is not None
            ]),
            p=2,
        )
        return norm


class LitClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
        self.optimizer = SAM(self.parameters(), torch.optim.SGD, lr=0.1, momentum=0.9)

    def generic_criterion(self, out, y):
        return F.cross_entropy(out, y)

    def manual_backward(self, loss):
        loss.backward()

    def training_step(self, batch, batch_idx):
        x, y = batch
        opt = self.optimizer
        out = self.model(x)
        loss = self.generic_criterion(out, y)
        out_2 = self.model(x)
        loss_2 = self.generic_criterion(out_2, y)

        self.manual_backward(loss)
        opt.first_step(zero_grad=True)  # <-- IPL001
        self.manual_backward(loss_2)
        opt.second_step(zero_grad=True)
        return loss.detach()


def main():
    module = LitClassifier()
    batch = (torch.randn(16, 10), torch.randint(0, 4, (16,)))
    loss = module.training_step(batch, 0)
    return loss, module.model[0].weight.detach().clone()


loss, weight = main()
