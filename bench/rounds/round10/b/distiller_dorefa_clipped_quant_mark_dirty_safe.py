# label: safe
# why: ClippedLinearQuantization clamps and quantizes the BatchNorm output in place and LinearQuantizeSTE declares it with ctx.mark_dirty; BatchNorm saved its input, not this output, and the STE backward needs no saved value.
# source: https://github.com/IntelLabs/distiller/blob/41d1b3d8728f7f0e60c87e71802def322ac66b79/distiller/quantization/clipped_linear.py
import torch
import torch.nn as nn

torch.manual_seed(0)


def asymmetric_linear_quantization_scale_factor(num_bits, saturation_min, saturation_max):
    n = 2 ** num_bits - 1
    return n / (saturation_max - saturation_min)


def clamp(input, min, max, inplace=False):
    if inplace:
        input.clamp_(min, max)
        return input
    return torch.clamp(input, min, max)


def linear_quantize(input, scale_factor, inplace=False):
    if inplace:
        input.mul_(scale_factor).round_()
        return input
    return torch.round(scale_factor * input)


def linear_dequantize(input, scale_factor, inplace=False):
    if inplace:
        input.div_(scale_factor)
        return input
    return input / scale_factor


class LinearQuantizeSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, scale_factor, dequantize, inplace):
        if inplace:
            ctx.mark_dirty(input)
        output = linear_quantize(input, scale_factor, inplace)
        if dequantize:
            output = linear_dequantize(output, scale_factor, inplace)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        # Straight-through estimator
        return grad_output, None, None, None


class ClippedLinearQuantization(nn.Module):
    def __init__(self, num_bits, clip_val, dequantize=True, inplace=False):
        super().__init__()
        self.num_bits = num_bits
        self.clip_val = clip_val
        self.scale_factor = asymmetric_linear_quantization_scale_factor(num_bits, 0, clip_val)
        self.dequantize = dequantize
        self.inplace = inplace

    def forward(self, input):
        input = clamp(input, 0, self.clip_val, self.inplace)
        input = LinearQuantizeSTE.apply(input, self.scale_factor, self.dequantize, self.inplace)
        return input


def relu_replace_fn(module, bits_acts=3):
    return ClippedLinearQuantization(bits_acts, 1, dequantize=True, inplace=module.inplace)


model = nn.Sequential(
    nn.Conv2d(3, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(inplace=True),
    nn.Conv2d(4, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(inplace=True),
    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))
for name, module in list(model.named_children()):
    if isinstance(module, nn.ReLU):
        model._modules[name] = relu_replace_fn(module)

images = torch.randn(2, 3, 5, 5)
target = torch.tensor([0, 2])
loss = nn.functional.cross_entropy(model(images), target)
loss.backward()
