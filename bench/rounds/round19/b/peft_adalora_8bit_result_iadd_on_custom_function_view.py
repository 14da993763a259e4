# label: hazard raises
# why: the bitsandbytes-style MatMul8bitLt Function returns output.view(...) for 2-D inputs, and AdaLoRA's `result += output` modifies that custom-Function view in place, which autograd forbids
# source: https://github.com/huggingface/peft/pull/1146
import torch
import torch.nn as nn

torch.manual_seed(0)


class MatmulLtState:
    def __init__(self, weight):
        self.SCB = weight.abs().amax(dim=1) / 127.0
        self.CB = torch.round(weight / self.SCB.unsqueeze(1))


class MatMul8bitLt(torch.autograd.Function):
    @staticmethod
    def forward(ctx, A, B, bias=None, state=None):
        input_shape = A.shape
        A2d = A.reshape(-1, A.shape[-1])
        SCA = A2d.abs().amax(dim=1, keepdim=True) / 127.0
        CA = torch.round(A2d / SCA)
        out32 = CA @ state.CB.t()
        output = out32 * SCA * state.SCB.unsqueeze(0)
        if bias is not None:
            output = output + bias
        ctx.state = state
        clone_func = torch.clone if len(input_shape) == 3 else (lambda x: x)
        return clone_func(output.view(*input_shape[:-1], -1))

    @staticmethod
    def backward(ctx, grad_output):
        state = ctx.state
        weight = state.CB * state.SCB.unsqueeze(1)
        grad_A = grad_output @ weight
        return grad_A, None, None, None


class Linear8bitLt(nn.Linear):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__(in_features, out_features, bias=bias)
        self.weight.requires_grad_(False)
        self.state = MatmulLtState(self.weight.data)

    def forward(self, x):
        return MatMul8bitLt.apply(x, self.weight, self.bias, self.state)


class SVDLinear8bitLt(Linear8bitLt):
    def __init__(self, in_features, out_features, r=2, lora_alpha=4, lora_dropout=0.0):
        super().__init__(in_features, out_features, bias=False)
        self.lora_A = nn.ParameterDict({"default": nn.Parameter(torch.randn(r, in_features) * 0.1)})
        self.lora_E = nn.ParameterDict({"default": nn.Parameter(torch.randn(r, 1) * 0.1)})
        self.lora_B = nn.ParameterDict({"default": nn.Parameter(torch.randn(out_features, r) * 0.1)})
        self.lora_dropout = nn.ModuleDict({"default": nn.Dropout(lora_dropout)})
        self.scaling = {"default": lora_alpha}
        self.ranknum = nn.ParameterDict({"default": nn.Parameter(torch.tensor(float(r)), requires_grad=False)})
        self.active_adapter = "default"

    def forward(self, x):
        result = super().forward(x)
        adapter = self.active_adapter
        lora_A = self.lora_A[adapter]
        lora_B = self.lora_B[adapter]
        lora_E = self.lora_E[adapter]
        dropout = self.lora_dropout[adapter]
        scaling = self.scaling[adapter]
        ranknum = self.ranknum[adapter] + 1e-5
        output = (dropout(x) @ (lora_A * lora_E).T @ lora_B.T) * scaling / ranknum
        result += output  # <-- IPL001: in-place add on the view returned by the MatMul8bitLt custom Function
        return result


layer = SVDLinear8bitLt(6, 4)
tokens = torch.randn(5, 6)
out = layer(tokens)
orth_reg = ((layer.lora_A["default"] @ layer.lora_A["default"].T) - torch.eye(2)).pow(2).sum()
loss = out.pow(2).mean() + 0.1 * orth_reg
loss.backward()
