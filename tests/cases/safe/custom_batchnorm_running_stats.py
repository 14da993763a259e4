# label: safe
# why: running statistics are buffers updated in place under no_grad; the normalisation itself is computed out of place from batch statistics
import torch
import torch.nn as nn

torch.manual_seed(0)


class SimpleBatchNorm(nn.Module):
    def __init__(self, dim, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum = momentum
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.register_buffer("running_mean", torch.zeros(dim))
        self.register_buffer("running_var", torch.ones(dim))

    def forward(self, x):
        if self.training:
            mean = x.mean(0)
            var = x.var(0, unbiased=False)
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum)
                self.running_mean.add_(self.momentum * mean)
                self.running_var.mul_(1 - self.momentum)
                self.running_var.add_(self.momentum * var)
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


net = nn.Sequential(nn.Linear(4, 5), SimpleBatchNorm(5), nn.ReLU(inplace=True), nn.Linear(5, 1))
x = torch.randn(8, 4)
for _ in range(2):
    loss = net(x).pow(2).mean()
    loss.backward()
