# label: safe
# why: the main-line AMDLayerNorm computes x = var * (x - mean) out of place, so the input var_mean saved stays intact; its remaining in-place ops only touch var and the fresh normalized tensor, whose old values no backward needs.
# source: https://github.com/allenai/OLMo/commit/1a3f035d4c  (parent version of olmo/model.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


class ModelConfig:
    d_model = 16
    layer_norm_with_affine = True
    include_bias = True


class LayerNormBase(nn.Module):
    def __init__(self, config, size=None, elementwise_affine=True, eps=1e-05):
        super().__init__()
        self.config = config
        self.eps = eps
        self.normalized_shape = (size or config.d_model,)
        if elementwise_affine and config.layer_norm_with_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape) + 0.1 * torch.randn(self.normalized_shape))
            self.bias = nn.Parameter(0.1 * torch.randn(self.normalized_shape)) if config.include_bias else None
        else:
            self.register_parameter("bias", None)
            self.register_parameter("weight", None)


class AMDLayerNorm(LayerNormBase):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        og_dtype = x.dtype
        with torch.autocast(enabled=False, device_type=x.device.type):
            x = x.to(torch.float32)
            var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
            var.add_(self.eps)
            var.rsqrt_()  # rsqrt should be more stable than 1/sqrt
            x = var * (x - mean)
            if self.weight is not None:
                x.mul_(self.weight)
            if self.bias is not None:
                x.add_(self.bias)
            return x.to(og_dtype)


class OLMoBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.attn_norm = AMDLayerNorm(config)
        self.ff_norm = AMDLayerNorm(config)
        self.att_proj = nn.Linear(config.d_model, config.d_model)
        self.ff_proj = nn.Linear(config.d_model, 4 * config.d_model)
        self.ff_out = nn.Linear(4 * config.d_model, config.d_model)

    def forward(self, x):
        x = x + self.att_proj(self.attn_norm(x))
        x = x + self.ff_out(torch.nn.functional.gelu(self.ff_proj(self.ff_norm(x))))
        return x


def main():
    config = ModelConfig()
    block = OLMoBlock(config)
    x = torch.randn(2, 5, config.d_model)
    out = block(x)
    loss = out.pow(2).mean()
    loss.backward()
    return out.detach(), block.attn_norm.weight.grad


block_out, attn_norm_weight_grad = main()
