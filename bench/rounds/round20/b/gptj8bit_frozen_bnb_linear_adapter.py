# label: hazard raises
# why: DequantizeAndLinear.apply returns F.linear's 3-D output, a view created inside the custom Function, and FrozenBNBLinear then adds the LoRA adapter into it in place (`output += self.adapter(input)`), which autograd forbids because it would bypass the custom backward.
# source: https://github.com/sleekmike/Finetune_GPT-J_6B_8-bit/issues/3
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)

BLOCK = 64


def quantize_blockwise(matrix, code):
    flat = matrix.reshape(-1, BLOCK)
    absmax = flat.abs().max(dim=1).values.clamp_min(1e-8)
    normed = flat / absmax[:, None]
    idx = (normed[..., None] - code).abs().argmin(-1).to(torch.uint8)
    return idx.reshape(matrix.shape), absmax


def dequantize_blockwise(weights_quantized, absmax, code):
    vals = code[weights_quantized.long()].reshape(-1, BLOCK) * absmax[:, None]
    return vals.reshape(weights_quantized.shape)


class DequantizeAndLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weights_quantized, absmax, code, bias):
        weights_deq = dequantize_blockwise(weights_quantized, absmax=absmax, code=code)
        ctx.save_for_backward(input, weights_quantized, absmax, code)
        ctx._has_bias = bias is not None
        return F.linear(input, weights_deq, bias)

    @staticmethod
    def backward(ctx, grad_output):
        assert not ctx.needs_input_grad[1] and not ctx.needs_input_grad[2] and not ctx.needs_input_grad[3]
        input, weights_quantized, absmax, code = ctx.saved_tensors
        weights_deq = dequantize_blockwise(weights_quantized, absmax=absmax, code=code)
        grad_input = grad_output @ weights_deq
        grad_bias = grad_output.flatten(0, -2).sum(dim=0) if ctx._has_bias else None
        return grad_input, None, None, None, grad_bias


class FrozenBNBLinear(nn.Module):
    def __init__(self, weight, absmax, code, bias=None):
        super().__init__()
        self.out_features, self.in_features = weight.shape
        self.register_buffer("weight", weight.requires_grad_(False))
        self.register_buffer("absmax", absmax.requires_grad_(False))
        self.register_buffer("code", code.requires_grad_(False))
        self.adapter = None
        self.bias = bias

    def forward(self, input):
        output = DequantizeAndLinear.apply(input, self.weight, self.absmax, self.code, self.bias)
        if self.adapter:
            output += self.adapter(input)  # <-- IPL001
        return output

    @classmethod
    def from_linear(cls, linear, code):
        weights_int8, absmax = quantize_blockwise(linear.weight.detach(), code)
        return cls(weights_int8, absmax, code, linear.bias)


def add_adapters(model, adapter_dim=4):
    for module in model.modules():
        if isinstance(module, FrozenBNBLinear):
            module.adapter = nn.Sequential(
                nn.Linear(module.in_features, adapter_dim, bias=False),
                nn.Linear(adapter_dim, module.out_features, bias=False),
            )
            nn.init.normal_(module.adapter[1].weight, std=0.02)


class GPTJMLP(nn.Module):
    def __init__(self, embed_dim, intermediate_size, code):
        super().__init__()
        self.fc_in = FrozenBNBLinear.from_linear(nn.Linear(embed_dim, intermediate_size), code)
        self.fc_out = FrozenBNBLinear.from_linear(nn.Linear(intermediate_size, embed_dim), code)

    def forward(self, hidden_states):
        return self.fc_out(F.gelu(self.fc_in(hidden_states)))


def main():
    code = torch.linspace(-1, 1, 256)
    mlp = GPTJMLP(64, 128, code)
    add_adapters(mlp)
    for p in mlp.parameters():
        p.requires_grad_(False)
    for m in mlp.modules():
        if isinstance(m, FrozenBNBLinear):
            for p in m.adapter.parameters():
                p.requires_grad_(True)
    hidden = torch.randn(2, 5, 64)
    loss = mlp(hidden).pow(2).mean()
    loss.backward()
    return loss.detach(), mlp.fc_in.adapter[0].weight.grad


loss, adapter_grad = main()
