# label: hazard silent no-twin
# why: with inplace=True (inherited from the replaced nn.ReLU(inplace=True)) PACT saves `input` for backward and then clamps and quantizes that same tensor in place, so backward builds the clip_val gradient mask from quantized values instead of the pre-activation.
# source: https://github.com/IntelLabs/distiller/pull/336 (replaced the LearnedClippedLinearQuantizeSTE from https://github.com/IntelLabs/distiller/blob/41d1b3d8728f7f0e60c87e71802def322ac66b79/distiller/quantization/clipped_linear.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


def asymmetric_linear_quantization_scale_factor(num_bits, saturation_min, saturation_max):
    n = 2 ** num_bits - 1
    return n / (saturation_max - saturation_min)


def clamp(input, min, max, inplace=False):
    if inplace:
        input.clamp_(min, max)  # <-- IPL005: rewrites the input PACT saved for backward
        return input
    return torch.clamp(input, min, max)


def linear_quantize(input, scale_factor, inplace=False):
    if inplace:
        input.mul_(scale_factor).round_()  # <-- IPL005: quantizes the saved input in place
        return input
    return torch.round(scale_factor * input)


def linear_dequantize(input, scale_factor, inplace=False):
    if inplace:
        input.div_(scale_factor)  # <-- IPL005: dequantizes the saved input in place
        return input
    return input / scale_factor


class LearnedClippedLinearQuantizeSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, clip_val, num_bits, dequantize, inplace):
        ctx.save_for_backward(input, clip_val)
        if inplace:
            ctx.mark_dirty(input)
        scale_factor = asymmetric_linear_quantization_scale_factor(num_bits, 0, clip_val.data[0])
        output = clamp(input, 0, clip_val.data[0], inplace)
        output = linear_quantize(output, scale_factor, inplace)
        if dequantize:
            output = linear_dequantize(output, scale_factor, inplace)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, clip_val = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input.le(0)] = 0
        grad_input[input.ge(clip_val.data[0])] = 0

        grad_alpha = grad_output.clone()
        grad_alpha[input.lt(clip_val.data[0])] = 0
        grad_alpha = grad_alpha.sum().expand_as(clip_val)

        # Straight-through estimator for the scale factor calculation
        return grad_input, grad_alpha, None, None, None


class LearnedClippedLinearQuantization(nn.Module):
    def __init__(self, num_bits, init_act_clip_val, dequantize=True, inplace=False):
        super().__init__()
        self.num_bits = num_bits
        self.clip_val = nn.Parameter(torch.Tensor([init_act_clip_val]))
        self.dequantize = dequantize
        self.inplace = inplace

    def forward(self, input):
        return LearnedClippedLinearQuantizeSTE.apply(input, self.clip_val, self.num_bits, self.dequantize, self.inplace)


def relu_replace_fn(module, bits_acts=2, act_clip_init_val=1.0):
    return LearnedClippedLinearQuantization(bits_acts, act_clip_init_val, dequantize=True, inplace=module.inplace)


model = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(inplace=True), nn.Linear(8, 3))
for name, module in list(model.named_children()):
    if isinstance(module, nn.ReLU):
        model._modules[name] = relu_replace_fn(module)

x = torch.randn(16, 6) * 2
target = torch.randint(0, 3, (16,))
loss = nn.functional.cross_entropy(model(x), target)
loss.backward()
clip_grad = model[2].clip_val.grad.clone()
