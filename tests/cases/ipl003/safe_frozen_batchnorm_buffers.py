# label: safe no-twin
# why: a frozen BatchNorm keeps weight and bias as buffers, so copying into them is not a write to a leaf that requires grad
import torch
import torch.nn as nn

torch.manual_seed(0)


class FrozenBatchNorm2d(nn.Module):
    def __init__(self, n: int) -> None:
        super().__init__()
        self.register_buffer("weight", torch.ones(n))
        self.bias = nn.Buffer(torch.zeros(n))
        self.register_buffer("running_mean", torch.zeros(n))
        self.register_buffer("running_var", torch.ones(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = self.weight * (self.running_var + 1e-5).rsqrt()
        shift = self.bias - self.running_mean * scale
        return x * scale.reshape(1, -1, 1, 1) + shift.reshape(1, -1, 1, 1)


def freeze_batchnorms(model: nn.Module) -> None:
    for name, module in model.named_children():
        if isinstance(module, nn.BatchNorm2d):
            frozen = FrozenBatchNorm2d(module.num_features)
            frozen.weight.copy_(module.weight)
            frozen.bias.copy_(module.bias)
            frozen.running_mean.copy_(module.running_mean)
            frozen.running_var.copy_(module.running_var)
            model._modules[name] = frozen
        freeze_batchnorms(module)


net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
freeze_batchnorms(net)
net(torch.randn(1, 3, 8, 8)).sum().backward()
