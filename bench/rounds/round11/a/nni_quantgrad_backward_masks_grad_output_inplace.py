# label: hazard silent
# why: QuantGrad.backward zeroes the clipped positions of grad_output in place, but in a residual block that gradient tensor is shared with the identity branch, whose gradient is silently masked too.
# source: https://github.com/microsoft/nni/pull/3160
import torch
import torch.nn as nn

torch.manual_seed(0)


class QuantType:
    QUANT_INPUT = 0
    QUANT_WEIGHT = 1
    QUANT_OUTPUT = 2


class QuantGrad(torch.autograd.Function):
    @classmethod
    def _quantize(cls, x, scale, zp):
        return ((x / scale) + zp).round()

    @staticmethod
    def quant_backward(tensor, grad_output, quant_type, scale, zero_point, qmin, qmax):
        tensor_q = QuantGrad._quantize(tensor, scale, zero_point)
        mask = (tensor_q < qmin) | (tensor_q > qmax)
        grad_output[mask] = 0  # <-- IPL005: edits the incoming grad_output in place
        return grad_output

    @staticmethod
    def forward(ctx, tensor, quant_type, wrapper):
        output = wrapper.quantizer.quantize_output(tensor, wrapper)
        bits = wrapper.config["quant_bits"]
        qmin, qmax = torch.Tensor([0]), torch.Tensor([(1 << bits) - 1])
        ctx.quant_type = quant_type
        ctx.save_for_backward(tensor, wrapper.module.scale, wrapper.module.zero_point, qmin, qmax)
        return output

    @classmethod
    def backward(cls, ctx, grad_output):
        tensor, scale, zero_point, qmin, qmax = ctx.saved_tensors
        output = cls.quant_backward(tensor, grad_output, ctx.quant_type, scale, zero_point, qmin, qmax)
        return output, None, None


class QAT_Quantizer:
    def quantize_output(self, output, wrapper):
        module = wrapper.module
        q = torch.clamp((output / module.scale + module.zero_point).round(), 0, (1 << wrapper.config["quant_bits"]) - 1)
        return (q - module.zero_point) * module.scale


class QuantizerModuleWrapper(nn.Module):
    def __init__(self, module, config, quantizer):
        super().__init__()
        self.module = module
        self.config = config
        self.quantizer = quantizer
        self.module.register_buffer("scale", torch.tensor([0.05]))
        self.module.register_buffer("zero_point", torch.tensor([8.0]))

    def forward(self, x):
        out = self.module(x)
        return QuantGrad.apply(out, QuantType.QUANT_OUTPUT, self)


class ResidualBlock(nn.Module):
    def __init__(self, dim=6):
        super().__init__()
        self.fc = QuantizerModuleWrapper(nn.Linear(dim, dim), {"quant_bits": 4}, QAT_Quantizer())

    def forward(self, x):
        identity = x
        out = self.fc(x)
        return out + identity


stem = nn.Linear(4, 6)
block = ResidualBlock()
head = nn.Linear(6, 2)
x = torch.randn(8, 4)
y = torch.randint(0, 2, (8,))
logits = head(block(stem(x)))
loss = nn.functional.cross_entropy(logits, y)
loss.backward()
