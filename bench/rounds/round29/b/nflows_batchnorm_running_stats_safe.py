# label: safe
# why: BatchNorm updates its running_mean/running_var buffers in place with the detached batch statistics (the fix), so the buffers never join the graph and the in-place update cannot disturb the flow's log-density gradient.
# source: https://github.com/bayesiains/nflows/commit/36dcabc9dceef9be4b518232f57d9445e6511240
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BatchNorm(nn.Module):
    def __init__(self, features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.eps = eps
        constant = torch.log(torch.exp(torch.tensor(1 - eps)) - 1)
        self.unconstrained_weight = nn.Parameter(constant * torch.ones(features))
        self.bias = nn.Parameter(torch.zeros(features))
        self.register_buffer("running_mean", torch.zeros(features))
        self.register_buffer("running_var", torch.zeros(features))

    @property
    def weight(self):
        return F.softplus(self.unconstrained_weight) + self.eps

    def forward(self, inputs, context=None):
        if self.training:
            mean, var = inputs.mean(0), inputs.var(0)
            self.running_mean.mul_(1 - self.momentum).add_(mean.detach() * self.momentum)
            self.running_var.mul_(1 - self.momentum).add_(var.detach() * self.momentum)
        else:
            mean, var = self.running_mean, self.running_var

        outputs = self.weight * ((inputs - mean) / torch.sqrt((var + self.eps))) + self.bias
        logabsdet_ = torch.log(self.weight) - 0.5 * torch.log(var + self.eps)
        logabsdet = torch.sum(logabsdet_) * inputs.new_ones(inputs.shape[0])
        return outputs, logabsdet


class MaskedAffine(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.net = nn.Linear(features, 2 * features)

    def forward(self, inputs):
        shift, log_scale = self.net(inputs).chunk(2, dim=-1)
        log_scale = torch.tanh(log_scale)
        return inputs * log_scale.exp() + shift, log_scale.sum(-1)


def log_prob(transforms, x):
    total_logabsdet = torch.zeros(x.shape[0])
    for transform in transforms:
        x, logabsdet = transform(x)
        total_logabsdet = total_logabsdet + logabsdet
    base = -0.5 * (x ** 2).sum(-1) - 0.5 * x.shape[-1] * torch.log(torch.tensor(2 * torch.pi))
    return base + total_logabsdet


def main():
    transforms = nn.ModuleList([MaskedAffine(3), BatchNorm(3), MaskedAffine(3), BatchNorm(3)])
    optimizer = torch.optim.SGD(transforms.parameters(), lr=0.01)
    data = torch.randn(64, 3) * torch.tensor([1.0, 2.0, 0.5]) + 1.0
    for step in range(3):
        batch = data[step * 16:(step + 1) * 16]
        optimizer.zero_grad()
        loss = -log_prob(transforms, batch).mean()
        loss.backward()
        optimizer.step()
    transforms.eval()
    eval_loss = -log_prob(transforms, data[48:]).mean()
    eval_loss.backward()
    return loss.detach(), eval_loss.detach(), transforms[1].running_mean, transforms[0].net.weight.grad


loss, eval_loss, running_mean, grad = main()
