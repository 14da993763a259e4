# label: hazard raises
# why: SAM.first_step perturbs every weight in place (p.add_(e_w)) while the first forward graph is retained; the "second" pass re-runs backward on that old loss, whose saved fc/conv weights now have a newer version, so backward raises.
# source: https://github.com/kozistr/pytorch_optimizer/issues/66
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
                p.add_(e_w)  # <-- IPL001: perturbs weights saved by the retained first forward graph
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.data = self.state[p]["old_p"]
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()

    def _grad_norm(self):
        return torch.norm(torch.stack([
            ((torch.abs(p) if group["adaptive"] else 1.0) * p.grad).norm(p=2)
            for group in self.param_groups for p in group["params"] if p.grad is not None]), p=2)


class ResNet18(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.layer1 = nn.Sequential(nn.Conv2d(8, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.linear = nn.Linear(8, num_classes)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out1 = self.layer1(out)
        out = F.adaptive_avg_pool2d(out1, 1).flatten(1)
        return self.linear(out), out, [out1]


models = {'backbone': ResNet18()}
criterion = nn.CrossEntropyLoss(reduction='none')
optimizers = {'backbone': SAM(models['backbone'].parameters(), torch.optim.SGD, lr=0.1, momentum=0.9)}


def train_epoch(models, criterion, optimizers, batches):
    models['backbone'].train()
    for inputs, labels in batches:
        optimizers['backbone'].zero_grad()
        scores, _, features = models['backbone'](inputs)
        target_loss = criterion(scores, labels)
        m_backbone_loss = torch.sum(target_loss) / target_loss.size(0)
        loss = m_backbone_loss
        # -----------------SAM Optimizer -------------------
        loss.backward(retain_graph=True)
        optimizers['backbone'].first_step(zero_grad=True)

        criterion(models['backbone'](inputs)[0], labels)
        loss.backward(retain_graph=True)
        optimizers['backbone'].second_step(zero_grad=True)
    return loss


batches = [(torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,)))]
final_loss = train_epoch(models, criterion, optimizers, batches)
