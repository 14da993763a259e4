# label: hazard raises
# why: the 4-bit base layer's custom autograd Function returns a reshaped view of its matmul result, and LoRA's result += output writes into that custom-Function view in place, which autograd forbids
# source: https://github.com/huggingface/peft/commit/6e783780ca9df3a623992cc4d1d665001232eae0
import torch
import torch.nn as nn

torch.manual_seed(0)


class MatMul4Bit(torch.autograd.Function):
    """Dequantize-and-matmul kernel that hands back a reshaped view of its 2-D result."""

    @staticmethod
    def forward(ctx, A, B, quant_state, bias=None):
        W = B * quant_state
        ctx.save_for_backward(A, W)
        out = torch.matmul(A.reshape(-1, A.shape[-1]), W.t())
        if bias is not None:
            out = out + bias
        return out.view(*A.shape[:-1], W.shape[0])

    @staticmethod
    def backward(ctx, grad_output):
        A, W = ctx.saved_tensors
        grad_A = grad_output @ W
        return grad_A, None, None, None


class Linear4bit(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randint(-7, 8, (out_features, in_features)).float(), requires_grad=False)
        self.quant_state = torch.rand(out_features, 1) * 0.1
        self.bias = nn.Parameter(torch.zeros(out_features), requires_grad=False)

    def forward(self, x):
        return MatMul4Bit.apply(x, self.weight, self.quant_state, self.bias)


class LoraLayer(nn.Module):
    def __init__(self, base_layer, r=4, lora_alpha=8, lora_dropout=0.0, adapter_name="default"):
        super().__init__()
        self.base_layer = base_layer
        self.active_adapter = adapter_name
        self.disable_adapters = False
        self.merged = False
        in_features, out_features = base_layer.weight.shape[1], base_layer.weight.shape[0]
        self.lora_A = nn.ModuleDict({adapter_name: nn.Linear(in_features, r, bias=False)})
        self.lora_B = nn.ModuleDict({adapter_name: nn.Linear(r, out_features, bias=False)})
        self.lora_dropout = nn.ModuleDict({adapter_name: nn.Dropout(lora_dropout)})
        self.scaling = {adapter_name: lora_alpha / r}
        nn.init.normal_(self.lora_B[adapter_name].weight, std=0.02)


class Linear4bitLora(LoraLayer):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.base_layer(x)

        if self.disable_adapters or self.active_adapter not in self.lora_A.keys():
            return result
        elif self.merged:
            return result

        lora_A = self.lora_A[self.active_adapter]
        lora_B = self.lora_B[self.active_adapter]
        dropout = self.lora_dropout[self.active_adapter]
        scaling = self.scaling[self.active_adapter]

        requires_conversion = not torch.is_autocast_enabled()
        if requires_conversion:
            expected_dtype = result.dtype
            x = x.to(lora_A.weight.dtype)
        output = lora_B(lora_A(dropout(x)))
        if requires_conversion:
            output = output.to(expected_dtype)
        output = output * scaling
        result += output  # <-- IPL005: result is a view returned by the MatMul4Bit custom Function
        return result


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=20, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.q_proj = Linear4bitLora(Linear4bit(dim, dim))
        self.v_proj = Linear4bitLora(Linear4bit(dim, dim))
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids):
        h = self.embed(input_ids)
        q = self.q_proj(h)
        v = self.v_proj(h)
        att = torch.softmax(q @ h.transpose(1, 2) / 8 ** 0.5, dim=-1)
        return self.lm_head(att @ v + h)


model = TinyCausalLM()
for name, p in model.named_parameters():
    if "lora_" not in name:
        p.requires_grad_(False)
input_ids = torch.randint(0, 20, (2, 6))
logits = model(input_ids)
loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 20), input_ids[:, 1:].reshape(-1))
loss.backward()
