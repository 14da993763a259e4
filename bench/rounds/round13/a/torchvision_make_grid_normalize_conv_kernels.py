# label: hazard raises
# why: make_grid(normalize=True, scale_each=True) clones the conv weight slice (still in the graph) and normalizes each unbind view in place with clamp_/add_/div_, which autograd forbids.
# source: https://github.com/pytorch/vision/issues/3025
import math
import torch
import torch.nn as nn

torch.manual_seed(0)


def make_grid(tensor, nrow=8, padding=2, normalize=False, range=None, scale_each=False, pad_value=0):
    if tensor.dim() == 4 and tensor.size(1) == 1:
        tensor = torch.cat((tensor, tensor, tensor), 1)

    if normalize is True:
        tensor = tensor.clone()  # avoid modifying tensor in-place

        def norm_ip(img, min, max):
            img.clamp_(min=min, max=max)  # <-- IPL001: in-place on an unbind view of a graph tensor
            img.add_(-min).div_(max - min + 1e-5)  # <-- IPL001: in-place on an unbind view of a graph tensor

        def norm_range(t, range):
            if range is not None:
                norm_ip(t, range[0], range[1])
            else:
                norm_ip(t, float(t.min()), float(t.max()))

        if scale_each is True:
            for t in tensor:  # loop over mini-batch dimension
                norm_range(t, range)
        else:
            norm_range(tensor, range)

    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    grid = tensor.new_full((3, height * ymaps + padding, width * xmaps + padding), pad_value)
    k = 0
    for y in torch.arange(ymaps).tolist():
        for x in torch.arange(xmaps).tolist():
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding).narrow(
                2, x * width + padding, width - padding).copy_(tensor[k])
            k = k + 1
    return grid


alexnet_features = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Conv2d(4, 2, 3))

grids = []
for sub_module in alexnet_features.modules():
    if isinstance(sub_module, nn.Conv2d):
        kernels = sub_module.weight
        c_out, c_int, k_w, k_h = tuple(kernels.shape)
        for o_idx in range(c_out):
            kernel_idx = kernels[o_idx, :, :, :].unsqueeze(1)
            img_grid = make_grid(kernel_idx, normalize=True, scale_each=True, nrow=3)
            grids.append(img_grid)
