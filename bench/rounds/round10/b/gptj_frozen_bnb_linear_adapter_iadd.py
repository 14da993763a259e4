# label: hazard raises
# why: DequantizeAndLinear returns F.linear's output, which for 3-D input is a view created inside the custom Function; adding the adapter output into it in place is forbidden by autograd.
# source: https://github.com/gustavecortal/gpt-j-fine-tuning-example/issues/1
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def quantize_blockwise(w):
    absmax = w.abs().max()
    code = torch.linspace(-1, 1, 256)
    q = torch.round((w / absmax + 1) * 127.5).clamp(0, 255).to(torch.uint8)
    return q, absmax, code


def dequantize_blockwise(weights_quantized, absmax, code):
    return code[weights_quantized.long()] * absmax


class DequantizeAndLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weights_quantized, absmax, code, bias):
        weights_deq = dequantize_blockwise(weights_quantized, absmax=absmax, code=code)
        ctx.save_for_backward(input, weights_quantized, absmax, code)
        ctx._has_bias = bias is not None
        return F.linear(input, weights_deq, bias)

    @staticmethod
    def backward(ctx, grad_output):
        input, weights_quantized, absmax, code = ctx.saved_tensors
        weights_deq = dequantize_blockwise(weights_quantized, absmax=absmax, code=code)
        grad_input = grad_output @ weights_deq
        grad_bias = grad_output.flatten(0, -2).sum(dim=0) if ctx._has_bias else None
        return grad_input, None, None, None, grad_bias


class FrozenBNBLinear(nn.Module):
    def __init__(self, weight, bias):
        super().__init__()
        self.out_features, self.in_features = weight.shape
        q, absmax, code = quantize_blockwise(weight)
        self.register_buffer("weight", q)
        self.register_buffer("absmax", absmax)
        self.register_buffer("code", code)
        self.adapter = None
        self.bias = bias

    def forward(self, input):
        output = DequantizeAndLinear.apply(input, self.weight, self.absmax, self.code, self.bias)
        if self.adapter:
            output += self.adapter(input)  # <-- IPL005: output is a view returned by a custom Function
        return output


def add_adapters(model, adapter_dim=2):
    for module in model.modules():
        if isinstance(module, FrozenBNBLinear):
            module.adapter = nn.Sequential(
                nn.Linear(module.in_features, adapter_dim, bias=False),
                nn.Linear(adapter_dim, module.out_features, bias=False),
            )
            nn.init.zeros_(module.adapter[1].weight)


lin = nn.Linear(6, 5)
model = nn.Sequential(FrozenBNBLinear(lin.weight.detach(), lin.bias.detach()))
add_adapters(model)
hidden = torch.randn(2, 3, 6, requires_grad=True)
out = model(hidden)
loss = out.pow(2).mean()
loss.backward()
