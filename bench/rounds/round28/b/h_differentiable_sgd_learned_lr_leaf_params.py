# label: hazard raises no-twin
# why: with differentiable=True the SGD step runs under grad mode and applies param.addcmul_(grad, lr) to the model's own nn.Parameters, which are leaves that require grad, so the hypergradient step raises "a leaf Variable that requires grad is being used in an in-place operation".
# source: https://github.com/pytorch/pytorch/pull/143122
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        return self.fc(x)


def inner_loss(model, batch):
    x, y = batch
    return F.mse_loss(model(x), y)


def main():
    model = Regressor()
    log_lr = torch.tensor(-2.0, requires_grad=True)  # learned inner learning rate
    meta_opt = torch.optim.Adam([log_lr], lr=0.01)
    train_batch = (torch.randn(16, 4), torch.randn(16, 1))
    val_batch = (torch.randn(16, 4), torch.randn(16, 1))

    lr = log_lr.exp()
    inner_opt = torch.optim.SGD(model.parameters(), lr=lr, differentiable=True)
    loss = inner_loss(model, train_batch)
    grads = torch.autograd.grad(loss, list(model.parameters()))
    for p, g in zip(model.parameters(), grads):
        p.grad = g
    inner_opt.step()  # <-- IPL003
    val_loss = inner_loss(model, val_batch)
    meta_opt.zero_grad()
    val_loss.backward()
    meta_opt.step()
    return val_loss.detach(), log_lr.detach().clone()


val_loss, log_lr = main()
