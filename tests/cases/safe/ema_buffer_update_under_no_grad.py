# label: safe
# why: running statistics buffers are updated in place under torch.no_grad() after the loss graph has been used; they never feed the differentiated graph
import torch
import torch.nn as nn


class FeatureNorm(nn.Module):
    def __init__(self, d, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("running_mean", torch.zeros(d))
        self.register_buffer("running_var", torch.ones(d))

    def forward(self, x):
        mean = x.mean(dim=0)
        var = x.var(dim=0, unbiased=False)
        with torch.no_grad():
            self.running_mean.mul_(1 - self.momentum)
            self.running_mean.add_(self.momentum * mean)
            self.running_var.mul_(1 - self.momentum)
            self.running_var.add_(self.momentum * var)
        return (x - mean) / torch.sqrt(var + 1e-5)


torch.manual_seed(0)
lin = nn.Linear(5, 5)
norm = FeatureNorm(5)
x = torch.randn(12, 5)

out = norm(lin(x))
loss = out.pow(3).mean()
loss.backward()

weight_grad = lin.weight.grad.clone()
run_mean = norm.running_mean.clone()
run_var = norm.running_var.clone()
