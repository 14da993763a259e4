# label: hazard silent
# why: save_image rescales the grid with grid.mul_(255).add_(0.5).clamp_(...), and for a single 3-D image make_grid returns the caller's tensor itself, so the saved super-resolved tile is overwritten before the PSNR is computed
# source: https://github.com/pytorch/vision/issues/1337
import io
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

torch.manual_seed(0)


def make_grid(tensor, nrow=8, padding=2, normalize=False, range=None, scale_each=False, pad_value=0):
    # (torchvision 0.4 utils.make_grid, reduced)
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
            grid.narrow(1, y * height + padding, height - padding) \
                .narrow(2, x * width + padding, width - padding).copy_(tensor[k])
            k = k + 1
    return grid


def save_image(tensor, fp, nrow=8, padding=2, normalize=False, range=None, scale_each=False, pad_value=0, format=None):
    grid = make_grid(tensor, nrow=nrow, padding=padding, pad_value=pad_value,
                     normalize=normalize, range=range, scale_each=scale_each)
    # Add 0.5 after unnormalizing to [0, 255] to round to nearest integer
    ndarr = grid.mul_(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to('cpu', torch.uint8).numpy()  # <-- IPL004: rescales the caller's image tensor in place (make_grid returned it as is)
    im = Image.fromarray(ndarr)
    im.save(fp, format=format)


def psnr(sr, hr):
    mse = F.mse_loss(sr.clamp(0, 1), hr)
    return 10 * torch.log10(1.0 / mse)


class SRNet(nn.Module):
    """x2 super-resolution for multispectral (RGB) satellite tiles"""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 12, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(12, 12, 3, padding=1))
        self.up = nn.PixelShuffle(2)

    def forward(self, lr):
        return torch.sigmoid(self.up(self.body(lr)))


model = SRNet().eval()
val_batches = [(torch.rand(2, 3, 4, 4), torch.rand(2, 3, 8, 8)) for _ in range(2)]
psnrs = []
with torch.no_grad():
    for step, (lr, hr) in enumerate(val_batches):
        sr = model(lr)
        save_image(sr[0], io.BytesIO(), format="png")  # keep a preview tile of the first image
        psnrs.append(psnr(sr, hr))
val_psnr = torch.stack(psnrs)
