# label: hazard raises
# why: the custom _QuantizedMatmul Function returns flat_output.view(...), so the LoRA wrapper's `result += ...` modifies a view created inside a custom Function, which autograd forbids (it would bypass the Function's backward).
# source: https://github.com/Vahe1994/AQLM/pull/26
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class _QuantizedMatmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, codes, codebooks, scales, bias):
        # dequantize: weight = codebooks[codes] * scales
        weight = codebooks[codes].flatten(-2, -1) * scales
        ctx.save_for_backward(input, weight)
        input_sizes = input.shape
        flat_input = input.reshape(-1, input_sizes[-1])
        flat_output = flat_input @ weight.t()
        if bias is not None:
            flat_output += bias.unsqueeze(0)
        output_sizes = list(input_sizes[:-1]) + [-1]
        output = flat_output.view(output_sizes)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        grad_input = grad_output @ weight
        return grad_input, None, None, None, None


class QuantizedLinear(nn.Module):
    def __init__(self, in_features, out_features, num_codebooks=2, codebook_size=16, group=4):
        super().__init__()
        self.codes = torch.randint(0, codebook_size, (out_features, in_features // group))
        self.codebooks = torch.randn(codebook_size, group)
        self.scales = torch.rand(out_features, 1) + 0.5
        self.bias = None

    def forward(self, input):
        return _QuantizedMatmul.apply(input, self.codes, self.codebooks, self.scales, self.bias)


class LoraLayer(nn.Module):
    def __init__(self, base_layer, r=4, lora_alpha=8):
        super().__init__()
        self.base_layer = base_layer
        in_f = base_layer.codes.shape[1] * base_layer.codebooks.shape[1]
        out_f = base_layer.codes.shape[0]
        self.lora_A = nn.Linear(in_f, r, bias=False)
        self.lora_B = nn.Linear(r, out_f, bias=False)
        nn.init.normal_(self.lora_B.weight, std=0.02)
        self.scaling = lora_alpha / r

    def forward(self, x):
        result = self.base_layer(x)
        result += self.lora_B(self.lora_A(x)) * self.scaling  # <-- IPL005
        return result


def main():
    layer = LoraLayer(QuantizedLinear(16, 8))
    x = torch.randn(2, 5, 16, requires_grad=True)
    out = layer(x)
    loss = F.mse_loss(out, torch.zeros_like(out))
    loss.backward()
    print(layer.lora_A.weight.grad.norm())


main()
