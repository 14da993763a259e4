# label: hazard silent
# why: For a single 3xHxW image make_grid returns (a view of) the caller's tensor, and save_image then runs grid.mul_(255).add_(0.5).clamp_(0, 255) on it, so the caller's image is overwritten and a second save of the same tensor produces a different (washed-out) picture.
# source: https://github.com/pytorch/vision/issues/1616
import math

import torch

torch.manual_seed(0)


def make_grid(tensor, nrow=8, padding=2, normalize=False, range=None, scale_each=False, pad_value=0):
    if isinstance(tensor, list):
        tensor = torch.stack(tensor, dim=0)

    if tensor.dim() == 2:  # single image H x W
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:  # single image
        if tensor.size(0) == 1:  # if single-channel, convert to 3-channel
            tensor = torch.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)

    if tensor.dim() == 4 and tensor.size(1) == 1:  # single-channel images
        tensor = torch.cat((tensor, tensor, tensor), 1)

    if normalize is True:
        tensor = tensor.clone()  # avoid modifying tensor in-place

    if tensor.size(0) == 1:
        return tensor.squeeze(0)

    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    num_channels = tensor.size(1)
    grid = tensor.new_full((num_channels, height * ymaps + padding, width * xmaps + padding), pad_value)
    k = 0
    for y in torch.arange(ymaps).tolist():
        for x in torch.arange(xmaps).tolist():
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding)\
                .narrow(2, x * width + padding, width - padding)\
                .copy_(tensor[k])
            k = k + 1
    return grid


def save_image(tensor, filename, nrow=8, padding=2, normalize=False, range=None, scale_each=False, pad_value=0):
    grid = make_grid(tensor, nrow=nrow, padding=padding, pad_value=pad_value,
                     normalize=normalize, range=range, scale_each=scale_each)
    # Add 0.5 after unnormalizing to [0, 255] to round to nearest integer
    ndarr = grid.mul_(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to('cpu', torch.uint8)  # <-- IPL004: writes into the caller's image tensor
    saved[filename] = ndarr
    return ndarr


saved = {}
tensor_1 = torch.rand(3, 4, 4) * 0.5
tensor_2 = torch.rand(3, 4, 4) * 0.5
final_tensor = tensor_1 + tensor_2

first_png = save_image(final_tensor, 'first.png')
second_png = save_image(final_tensor, 'second.png')
