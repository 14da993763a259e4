# label: safe no-twin
# why: the differentiable SGD step is applied to non-leaf fast-weight copies (params * 1.0, as in the upstream test) whose gradients were taken without create_graph, so the in-place addcmul_ just records a new graph node and the validation loss backpropagates into the learned learning rate.
# source: https://github.com/pytorch/pytorch/pull/143122
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x, params=None):
        if params is None:
            return self.fc(x)
        weight, bias = params
        return F.linear(x, weight, bias)


def inner_loss(model, batch, params=None):
    x, y = batch
    return F.mse_loss(model(x, params), y)


def main():
    model = Regressor()
    log_lr = torch.tensor(-2.0, requires_grad=True)  # learned inner learning rate
    meta_opt = torch.optim.Adam([log_lr], lr=0.01)
    train_batch = (torch.randn(16, 4), torch.randn(16, 1))
    val_batch = (torch.randn(16, 4), torch.randn(16, 1))

    lr = log_lr.exp()
    fast_weights = [p.detach() * 1.0 for p in model.parameters()]
    for fw in fast_weights:
        fw.requires_grad_(False)
    fast_weights = [fw.clone().requires_grad_(True) * 1.0 for fw in fast_weights]  # make non-leaf
    loss = inner_loss(model, train_batch, fast_weights)
    grads = torch.autograd.grad(loss, fast_weights)
    for fw, g in zip(fast_weights, grads):
        fw.grad = g
    inner_opt = torch.optim.SGD(fast_weights, lr=lr, differentiable=True)
    inner_opt.step()
    val_loss = inner_loss(model, val_batch, fast_weights)
    meta_opt.zero_grad()
    val_loss.backward()
    meta_opt.step()
    return val_loss.detach(), log_lr.detach().clone()


val_loss, log_lr = main()
