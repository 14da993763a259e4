# label: hazard raises
# why: each iteration convolves boundary (filter2d saves it for backward) and then marks reached pixels with boundary[mask == 1] = 1 in place, so backpropagating through the distance transform fails.
# source: https://github.com/kornia/kornia/pull/1584 (commit d7f411ff5a4a46cb94fd3c6aab5b67ddea360938)
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def create_meshgrid(height, width, dtype):
    ys = torch.arange(height, dtype=dtype)
    xs = torch.arange(width, dtype=dtype)
    gy, gx = torch.meshgrid(ys, xs, indexing='ij')
    return torch.stack([gx, gy], dim=-1)[None]


def filter2d(input, kernel, border_type='replicate'):
    b, c, h, w = input.shape
    kh, kw = kernel.shape[-2:]
    tmp_kernel = kernel[:, None].expand(c, 1, kh, kw)
    input = F.pad(input, [kw // 2, kw // 2, kh // 2, kh // 2], mode=border_type)
    return F.conv2d(input, tmp_kernel, groups=c)


def distance_transform(image: torch.Tensor, kernel_size: int = 3, h: float = 0.35) -> torch.Tensor:
    if not len(image.shape) == 4:
        raise ValueError(f"Invalid image shape, we expect BxCxHxW. Got: {image.shape}")
    n_iters: int = math.ceil(max(image.shape[2], image.shape[3]) / math.floor(kernel_size / 2))
    grid = create_meshgrid(kernel_size, kernel_size, dtype=image.dtype)
    grid -= math.floor(kernel_size / 2)
    kernel = torch.hypot(grid[0, :, :, 0], grid[0, :, :, 1])
    kernel = torch.exp(kernel / -h).unsqueeze(0)
    out = torch.zeros_like(image)
    boundary = image.clone()
    for i in range(n_iters):
        cdt = filter2d(boundary, kernel, border_type='replicate')
        cdt = -h * torch.log(cdt)
        cdt = torch.nan_to_num(cdt, posinf=0.0)
        mask = torch.where(cdt > 0, 1.0, 0.0)
        if mask.sum() == 0:
            break
        offset: int = i * kernel_size // 2
        out += (offset + cdt) * mask
        boundary[mask == 1] = 1  # <-- IPL001: boundary was saved by filter2d's convolution
    return out


class DistanceTransform(nn.Module):
    def __init__(self, kernel_size: int = 3, h: float = 0.35):
        super().__init__()
        self.kernel_size = kernel_size
        self.h = h

    def forward(self, image):
        if image.shape[1] > 1:
            image_in = image.view(-1, 1, image.shape[-2], image.shape[-1])
        else:
            image_in = image
        return distance_transform(image_in, self.kernel_size, self.h).view_as(image)


tiny_module = nn.Conv2d(1, 1, (3, 3), (1, 1), (1, 1))
dt = DistanceTransform()
input1 = torch.rand(1, 1, 8, 8, requires_grad=True)
input2 = torch.rand(1, 1, 8, 8, requires_grad=True)
out1 = dt(tiny_module(input1))
out2 = dt(input2)
loss = F.mse_loss(out1, out2)
loss.backward()
