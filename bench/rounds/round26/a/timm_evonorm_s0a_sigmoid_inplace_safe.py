# label: safe
# why: EvoNorm2dS0a applies `.sigmoid_()` in place to the temporary product `x * v`, which MulBackward never saved (it keeps x and v), so SigmoidBackward's saved output is the only reader and the gradient is unchanged.
# source: https://github.com/huggingface/pytorch-image-models/blob/d04f2f137795017fc110ecf1084ffbfdf5a25747/timm/models/layers/evo_norm.py
import torch
import torch.nn as nn

torch.manual_seed(0)


def _assert(condition: bool, message: str):
    assert condition, message


def group_std(x, groups: int = 32, eps: float = 1e-5, flatten: bool = False):
    B, C, H, W = x.shape
    x_dtype = x.dtype
    _assert(C % groups == 0, '')
    x = x.reshape(B, groups, C // groups, H, W)
    std = x.float().var(dim=(2, 3, 4), unbiased=False, keepdim=True).add(eps).sqrt()
    return std.expand(x.shape).reshape(B, C, H, W).to(x_dtype)


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
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.ones_(self.weight)
        nn.init.zeros_(self.bias)
        if self.v is not None:
            nn.init.ones_(self.v)


class EvoNorm2dS0a(EvoNorm2dS0):
    def __init__(self, num_features, groups=32, group_size=None, apply_act=True, eps=1e-5, **_):
        super().__init__(num_features, groups=groups, group_size=group_size, apply_act=apply_act, eps=eps)

    def forward(self, x):
        _assert(x.dim() == 4, 'expected 4D input')
        x_dtype = x.dtype
        v_shape = (1, -1, 1, 1)
        d = group_std(x, self.groups, self.eps)
        if self.v is not None:
            v = self.v.view(v_shape).to(dtype=x_dtype)
            x = x * (x * v).sigmoid_()
        x = x / d
        return x * self.weight.view(v_shape).to(dtype=x_dtype) + self.bias.view(v_shape).to(dtype=x_dtype)


class ConvNormAct(nn.Module):
    def __init__(self, in_chs, out_chs, groups=4):
        super().__init__()
        self.conv = nn.Conv2d(in_chs, out_chs, 3, padding=1, bias=False)
        self.bn = EvoNorm2dS0a(out_chs, groups=groups)

    def forward(self, x):
        return self.bn(self.conv(x))


def main():
    model = nn.Sequential(ConvNormAct(3, 8), ConvNormAct(8, 8), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5))
    x = torch.randn(2, 3, 8, 8)
    target = torch.tensor([1, 3])
    loss = nn.functional.cross_entropy(model(x), target)
    loss.backward()
    return loss.detach(), model[0].bn.v.grad, model[0].conv.weight.grad


loss, v_grad, conv_grad = main()
