# label: hazard raises
# why: without copy=True, tensor.to(torch.float32) returns the caller's fp32 activation itself, so the in-place div_/clamp_ rewrite the sigmoid output that SigmoidBackward saved (and that the caller reads again), and backward fails.
# source: https://github.com/pytorch/ao/commit/a7dc53d3c175a2234c9c3566daff1900dc4c9ea9
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class _RoundToFloat8(torch.autograd.Function):
    """
    Implementation of `tensor.to(float8_dtype)` with backward STE.
    """

    @staticmethod
    def forward(ctx, x: torch.Tensor, float8_dtype: torch.dtype) -> torch.Tensor:
        return x.to(float8_dtype)

    @staticmethod
    def backward(ctx, gy: torch.Tensor):
        return gy, None


def _maybe_expand_scale_to_tensor_shape(scale, target_shape):
    if scale.numel() == 1:
        return scale
    return scale.reshape(*scale.shape, *([1] * (len(target_shape) - scale.dim())))


def _quantize_affine_float8(tensor, scale, float8_dtype=torch.float8_e4m3fn):
    """
    Quantizes the high precision floating point tensor to a float8 tensor, using the given scaling factor.
    """
    tensor_fp32 = tensor.to(torch.float32)

    # Expand scale to match tensor dimensions for block-wise quantization
    scale_expanded = _maybe_expand_scale_to_tensor_shape(scale, tensor.shape)

    # Use in-place ops to avoid allocating additional float32 copies of the
    # full tensor, reducing peak memory for large activations.
    tensor_fp32.div_(scale_expanded)  # <-- IPL004, IPL001
    max_value = torch.finfo(float8_dtype).max
    tensor_fp32.clamp_(min=-max_value, max=max_value)  # <-- IPL004, IPL001
    return _RoundToFloat8.apply(tensor_fp32, float8_dtype)


def _dequantize_affine_float8(tensor, scale, output_dtype=torch.float32):
    fp8_tensor = tensor.to(torch.float32)
    scale_expanded = _maybe_expand_scale_to_tensor_shape(scale, tensor.shape)
    hp_tensor = fp8_tensor * scale_expanded
    return hp_tensor.to(output_dtype)


class Float8FakeQuantLinear(nn.Linear):
    def forward(self, x):
        x_scale = x.detach().abs().amax(dim=-1) / torch.finfo(torch.float8_e4m3fn).max
        x_scale = x_scale.clamp(min=1e-12)
        x_fq = _dequantize_affine_float8(_quantize_affine_float8(x, x_scale), x_scale)
        return F.linear(x_fq, self.weight, self.bias)


def main():
    fc1 = nn.Linear(8, 16)
    fq = Float8FakeQuantLinear(16, 4)
    x = torch.randn(6, 8)
    h = torch.sigmoid(fc1(x))          # sigmoid saves h for its backward
    out = fq(h) + h[:, :4]             # h is also read directly afterwards
    out.pow(2).mean().backward()
    return out.detach(), fc1.weight.grad.clone(), fq.weight.grad.clone()


out, grad_fc1, grad_fq = main()
