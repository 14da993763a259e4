# label: safe
# why: a from-scratch BatchNorm updates its registered running_mean/running_var buffers in place under no_grad; the buffers are never part of the training-mode graph.
import torch
import torch.nn as nn


class MyBatchNorm1d(nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum = momentum
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def forward(self, x):
        if self.training:
            mean = x.mean(0)
            var = x.var(0, unbiased=False)
            with torch.no_grad():
                n = x.shape[0]
                self.running_mean.mul_(1 - self.momentum)
                self.running_mean.add_(mean, alpha=self.momentum)
                self.running_var.mul_(1 - self.momentum)
                self.running_var.add_(var * n / (n - 1), alpha=self.momentum)
                self.num_batches_tracked += 1
        else:
            mean, var = self.running_mean, self.running_var
        x_hat = (x - mean) / torch.sqrt(var + self.eps)
        return x_hat * self.weight + self.bias


torch.manual_seed(0)
mlp = nn.Sequential(nn.Linear(5, 6), MyBatchNorm1d(6), nn.ReLU(), nn.Linear(6, 1))
for _ in range(3):
    batch = torch.randn(8, 5)
    loss = mlp(batch).abs().mean()
    loss.backward()

mlp.eval()
with torch.no_grad():
    eval_out = mlp(torch.randn(4, 5))
running_mean = mlp[1].running_mean.clone()
running_var = mlp[1].running_var.clone()
