# label: hazard silent
# why: save_image runs grid.mul_(255).add_(0.5).clamp_(0, 255) on what make_grid returns, which for a single image is a view of the caller's tensor, so the SR output is silently rescaled before PSNR is computed on it.
# source: https://github.com/pytorch/vision/pull/1244
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def make_grid(tensor, nrow=8, padding=2, normalize=False, pad_value=0):
    if tensor.dim() == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:
        if tensor.size(0) == 1:
            tensor = torch.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:
        tensor = torch.cat((tensor, tensor, tensor), 1)

    if tensor.size(0) == 1:
        return tensor.squeeze(0)

    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    grid = tensor.new_full((3, height * ymaps + padding, width * xmaps + padding), pad_value)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding).narrow(2, x * width + padding, width - padding).copy_(tensor[k])
            k = k + 1
    return grid


def save_image(tensor, filename, nrow=8, padding=2, normalize=False, pad_value=0):
    grid = make_grid(tensor, nrow=nrow, padding=padding, pad_value=pad_value, normalize=normalize)
    ndarr = grid.mul_(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to('cpu', torch.uint8).numpy()  # <-- IPL004: grid is a view of the caller's image
    return ndarr


def calc_psnr(sr, hr):
    mse = ((sr - hr) ** 2).mean()
    return 10 * torch.log10(1.0 / mse)


class SRNet(nn.Module):
    def __init__(self, scale=2):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 3 * scale * scale, 3, padding=1), nn.PixelShuffle(scale))

    def forward(self, x):
        return torch.sigmoid(self.body(x))


model = SRNet()
model.eval()
val_set = [(torch.rand(1, 3, 4, 4), torch.rand(1, 3, 8, 8)) for _ in range(2)]
psnrs = []
with torch.no_grad():
    for idx, (lr, hr) in enumerate(val_set):
        sr = model(lr)
        save_image(sr[0], 'val_%d.png' % idx)
        psnrs.append(calc_psnr(sr, hr))
mean_psnr = torch.stack(psnrs).mean()
