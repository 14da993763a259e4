# label: safe
# why: EvoNorm2dS0a applies sigmoid_ to the fresh product `x * v`, which neither mul saved (they saved x and v); sigmoid_ keeps its own output for backward and nothing writes to it afterwards, so the in-place sigmoid is correct (timm later dropped the `_` only for consistency).
# source: https://github.com/huggingface/pytorch-image-models/commit/4d7a5544f7f8596e1cdf4a72b08a5fb26070efbf (timm/models/layers/evo_norm.py, "Remove inplace sigmoid for consistency with other impl")
import torch
import torch.nn as nn

torch.manual_seed(0)


def group_std(x, groups: int = 32, eps: float = 1e-5, flatten: bool = False):
    B, C, H, W = x.shape
    x_dtype = x.dtype
    assert C % groups == 0
    if flatten:
        x = x.reshape(B, groups, -1)
        std = x.float().var(dim=2, unbiased=False, keepdim=True).add(eps).sqrt().to(x_dtype)
    else:
        x = x.reshape(B, groups, C // groups, H, W)
        std = x.float().var(dim=(2, 3, 4), unbiased=False, keepdim=True).add(eps).sqrt().to(x_dtype)
    return std.expand(x.shape).reshape(B, C, H, W)


class EvoNorm2dS0(nn.Module):
    def __init__(self, num_features, groups=32, group_size=None, apply_act=True, eps=1e-5, **_):
        super().__init__()
        self.apply_act = apply_act
        if group_size:
            assert num_features % group_size == 0
            self.groups = num_features // group_size
        else:
            self.groups = groups
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.v = nn.Parameter(torch.ones(num_features)) if apply_act else None


class EvoNorm2dS0a(EvoNorm2dS0):
    def forward(self, x):
        assert x.dim() == 4, 'expected 4D input'
        x_dtype = x.dtype
        v_shape = (1, -1, 1, 1)
        d = group_std(x, self.groups, self.eps)
        if self.v is not None:
            v = self.v.view(v_shape).to(dtype=x_dtype)
            x = x * (x * v).sigmoid_()
        x = x / d
        return x * self.weight.view(v_shape).to(dtype=x_dtype) + self.bias.view(v_shape).to(dtype=x_dtype)


class ConvNormAct(nn.Module):
    def __init__(self, in_chs, out_chs, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(in_chs, out_chs, 3, stride, 1, bias=False)
        self.bn = EvoNorm2dS0a(out_chs, group_size=4)

    def forward(self, x):
        return self.bn(self.conv(x))


model = nn.Sequential(ConvNormAct(3, 8), ConvNormAct(8, 16, stride=2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
images = torch.randn(4, 3, 16, 16)
labels = torch.randint(0, 10, (4,))
loss = nn.functional.cross_entropy(model(images), labels)
optimizer.zero_grad()
loss.backward()
optimizer.step()
