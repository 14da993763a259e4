# label: hazard raises
# why: for 2-D (varlen, flash-attn style) inputs MatMul8bitLt returns `output.view(output_shape)` without cloning, and peft's LoRA Linear8bitLt then does `result += output` on that view of a custom Function's output, which autograd refuses.
# source: https://github.com/bitsandbytes-foundation/bitsandbytes/issues/736 (peft side fixed in https://github.com/huggingface/peft/pull/1425)
import torch
import torch.nn as nn

torch.manual_seed(0)


class MatMul8bitLt(torch.autograd.Function):
    @staticmethod
    def forward(ctx, A, CB, SCB, bias=None):
        input_shape = A.shape
        output_shape = (*input_shape[:-1], CB.shape[0])
        A2 = A.reshape(-1, input_shape[-1])
        W = CB.float() * (SCB.unsqueeze(1) / 127.0)
        output = A2 @ W.t()
        if bias is not None:
            output = output + bias
        ctx.save_for_backward(CB, SCB)
        ctx.input_shape = input_shape
        clone_func = torch.clone if len(output_shape) == 3 else lambda x: x
        return clone_func(output.view(output_shape))

    @staticmethod
    def backward(ctx, grad_output):
        CB, SCB = ctx.saved_tensors
        W = CB.float() * (SCB.unsqueeze(1) / 127.0)
        grad_A = (grad_output.reshape(-1, grad_output.shape[-1]) @ W).reshape(ctx.input_shape)
        return grad_A, None, None, None


class Linear8bitLt(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        w = torch.randn(out_features, in_features) / in_features ** 0.5
        SCB = w.abs().max(dim=1).values
        self.register_buffer("CB", torch.round(w / SCB.unsqueeze(1) * 127).to(torch.int8))
        self.register_buffer("SCB", SCB)
        self.in_features, self.out_features = in_features, out_features

    def forward(self, x):
        return MatMul8bitLt.apply(x, self.CB, self.SCB)


class LoraLinear8bitLt(nn.Module):
    def __init__(self, base_layer, r=4, lora_alpha=8, lora_dropout=0.0):
        super().__init__()
        self.base_layer = base_layer
        self.lora_A = nn.ModuleDict({"default": nn.Linear(base_layer.in_features, r, bias=False)})
        self.lora_B = nn.ModuleDict({"default": nn.Linear(r, base_layer.out_features, bias=False)})
        self.lora_dropout = nn.ModuleDict({"default": nn.Dropout(lora_dropout)})
        self.scaling = {"default": lora_alpha / r}
        self.active_adapters = ["default"]
        nn.init.normal_(self.lora_B["default"].weight, std=0.02)

    def forward(self, x):
        result = self.base_layer(x)
        for active_adapter in self.active_adapters:
            lora_A = self.lora_A[active_adapter]
            lora_B = self.lora_B[active_adapter]
            dropout = self.lora_dropout[active_adapter]
            scaling = self.scaling[active_adapter]
            output = lora_B(lora_A(dropout(x)))
            output = output * scaling
            result += output  # <-- IPL001
        return result


def main():
    q_proj = LoraLinear8bitLt(Linear8bitLt(32, 32))
    # flash_attn_varlen_func path: sequences are packed into (total_tokens, hidden)
    hidden_states = torch.randn(9, 32)
    query_states = q_proj(hidden_states)
    loss = query_states.pow(2).mean()
    loss.backward()
    return loss.detach(), q_proj.lora_A["default"].weight.grad


loss, lora_A_grad = main()
