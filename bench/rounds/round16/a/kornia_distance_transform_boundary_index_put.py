# label: hazard raises
# why: distance_transform writes `boundary[mask == 1] = 1` in place while the replicate-padded convolution of the previous iteration still needs the old boundary for backward.
# source: https://github.com/kornia/kornia/issues/1579
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def create_meshgrid(height, width, normalized_coordinates=False, device=None, dtype=None):
    xs = torch.linspace(0, width - 1, width, device=device, dtype=dtype)
    ys = torch.linspace(0, height - 1, height, device=device, dtype=dtype)
    base_grid = torch.stack(torch.meshgrid([xs, ys], indexing='ij'), dim=-1)
    return base_grid.permute(1, 0, 2).unsqueeze(0)


def _compute_padding(kernel_size):
    computed = [k // 2 for k in kernel_size]
    out_padding = 2 * len(kernel_size) * [0]
    for i in range(len(kernel_size)):
        computed_tmp = computed[-(i + 1)]
        out_padding[2 * i + 0] = computed_tmp
        out_padding[2 * i + 1] = computed_tmp
    return out_padding


def filter2d(input, kernel, border_type='reflect', normalized=False, padding='same'):
    b, c, h, w = input.shape
    tmp_kernel = kernel.unsqueeze(1).to(input)
    tmp_kernel = tmp_kernel.expand(-1, c, -1, -1)
    height, width = tmp_kernel.shape[-2:]
    if padding == 'same':
        padding_shape = _compute_padding([height, width])
        input = F.pad(input, padding_shape, mode=border_type)
    tmp_kernel = tmp_kernel.reshape(-1, 1, height, width)
    input = input.view(-1, tmp_kernel.size(0), input.size(-2), input.size(-1))
    output = F.conv2d(input, tmp_kernel, groups=tmp_kernel.size(0), padding=0, stride=1)
    return output.view(b, c, h, w)


def distance_transform(image, kernel_size=3, h=0.35):
    n_iters = math.ceil(max(image.shape[2], image.shape[3]) / math.floor(kernel_size / 2))
    grid = create_meshgrid(kernel_size, kernel_size, normalized_coordinates=False,
                           device=image.device, dtype=image.dtype)

    grid -= math.floor(kernel_size / 2)
    kernel = torch.hypot(grid[0, :, :, 0], grid[0, :, :, 1])
    kernel = torch.exp(kernel / -h).unsqueeze(0)

    out = torch.zeros_like(image)

    # It is possible to avoid cloning the image if boundary = image, but this would require modifying the image tensor.
    boundary = image.clone()

    for i in range(n_iters):
        cdt = filter2d(boundary, kernel, border_type='replicate')
        cdt = -h * torch.log(cdt)

        # We are calculating log(0) above.
        cdt = torch.nan_to_num(cdt, posinf=0.0)

        mask = torch.where(cdt > 0, 1.0, 0.0)
        if mask.sum() == 0:
            break

        offset = i * kernel_size // 2
        out += (offset + cdt) * mask
        boundary[mask == 1] = 1  # <-- IPL001: overwrites the boundary that the previous filter2d saved for backward

    return out


class DistanceTransform(nn.Module):
    def __init__(self, kernel_size=3, h=0.35):
        super().__init__()
        self.kernel_size = kernel_size
        self.h = h

    def forward(self, image):
        image_in = image.view(-1, 1, image.shape[-2], image.shape[-1])
        return distance_transform(image_in, self.kernel_size, self.h).view_as(image)


seg_net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 3, padding=1))
x = torch.rand(1, 1, 8, 8)
target = (torch.rand(1, 1, 8, 8) > 0.85).float()
a = torch.sigmoid(seg_net(x))
a = a * (a > 0.5).float()
dt = DistanceTransform()
a_dist = dt(a)
b_dist = dt(target)
loss = F.mse_loss(a_dist, b_dist)
loss.backward()
