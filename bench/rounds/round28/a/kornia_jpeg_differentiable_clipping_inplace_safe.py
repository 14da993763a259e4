# label: safe
# why: _differentiable_clipping writes the soft-clipped values into a fresh clone of its input with masked assignment; the right-hand side reads output[mask] through indexing (a copy) and exp saves only its own result, so no tensor saved for backward is overwritten and gradients reach the image and the JPEG quality.
# source: https://github.com/kornia/kornia/commit/fdfcb4ba687a0ae8049e59d0ced5ccda8118e3f0 ("Perform diff. clipping inplace", kornia/enhance/jpeg.py)
from typing import Optional

import torch
from torch import Tensor

torch.manual_seed(0)


def _differentiable_polynomial_rounding(input: Tensor) -> Tensor:
    # Perform differentiable rounding
    output: Tensor = torch.round(input) + (input - torch.round(input)) ** 3
    return output


def _differentiable_polynomial_floor(input: Tensor) -> Tensor:
    output: Tensor = torch.floor(input) + (input - 0.5 - torch.floor(input)) ** 3
    return output


def _differentiable_clipping(
    input: Tensor,
    min: Optional[float] = None,
    max: Optional[float] = None,
    scale: float = 0.02,
) -> Tensor:
    # Make a copy of the input tensor
    output: Tensor = input.clone()
    # Perform differentiable soft clipping
    if max is not None:
        output[output > max] = -scale * (torch.exp(-output[output > max] + max) - 1.0) + max
    if min is not None:
        output[output < min] = scale * (torch.exp(output[output < min] - min) - 1.0) + min
    return output


def _jpeg_quality_to_scale(compression_strength: Tensor) -> Tensor:
    scale: Tensor = _differentiable_polynomial_floor(
        torch.where(compression_strength < 50, 5000.0 / compression_strength, 200.0 - 2.0 * compression_strength)
    )
    return scale


def _quantize(input: Tensor, jpeg_quality: Tensor, quantization_table: Tensor) -> Tensor:
    quantization_table_scaled: Tensor = (
        quantization_table[:, None] * _jpeg_quality_to_scale(jpeg_quality)[:, None, None, None]
    )
    quantization_table = _differentiable_polynomial_floor(
        _differentiable_clipping((quantization_table_scaled + 50.0) / 100.0, 1, 255)
    )
    output: Tensor = input / quantization_table
    output = _differentiable_polynomial_rounding(output)
    return output, quantization_table


def jpeg_codec_differentiable(image_rgb: Tensor, jpeg_quality: Tensor, quantization_table: Tensor) -> Tensor:
    # image in [0, 1] -> shifted 8x8 blocks (the DCT of the real codec is omitted here)
    B, C, H, W = image_rgb.shape
    blocks = (image_rgb * 255.0 - 128.0).reshape(B, C * (H // 8), 8, W // 8, 8).permute(0, 1, 3, 2, 4)
    blocks = blocks.reshape(B, -1, 8, 8)
    quantized, table = _quantize(blocks, jpeg_quality, quantization_table)
    dequantized = quantized * table
    out = dequantized.reshape(B, C * (H // 8), W // 8, 8, 8).permute(0, 1, 3, 2, 4).reshape(B, C, H, W)
    out = (out + 128.0) / 255.0
    # soft clip the decoded image back into the valid range
    return _differentiable_clipping(out, min=0.0, max=1.0)


def main():
    image = torch.rand(2, 3, 16, 16, requires_grad=True)
    jpeg_quality = torch.tensor([30.0, 80.0], requires_grad=True)
    quantization_table = torch.randint(2, 120, (1, 8, 8)).float()
    image_jpeg = jpeg_codec_differentiable(image, jpeg_quality, quantization_table)
    loss = (image_jpeg - image.detach()).abs().mean()
    loss.backward()
    return image_jpeg.detach(), image.grad, jpeg_quality.grad


image_jpeg, image_grad, quality_grad = main()
