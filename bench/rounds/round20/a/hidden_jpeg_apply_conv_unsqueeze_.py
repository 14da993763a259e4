# label: hazard raises
# why: apply_conv takes each channel as a view of image_yuv and calls unsqueeze_ on it; conv2d saved the previous channel view for backward, and the next channel's in-place unsqueeze_ bumps the shared version counter of image_yuv, so backward finds the saved UnsqueezeBackward1 output at the wrong version.
# source: https://github.com/ando-khachatryan/HiDDeN/issues/23
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def gen_filters(size_x, size_y, dct_or_idct_fun):
    tile_size_x = 8
    filters = torch.zeros((size_x * size_y, size_x, size_y))
    for k_y in range(size_y):
        for k_x in range(size_x):
            for n_y in range(size_y):
                for n_x in range(size_x):
                    filters[k_y * tile_size_x + k_x, n_y, n_x] = dct_or_idct_fun(n_y, k_y, size_y) * dct_or_idct_fun(n_x, k_x, size_x)
    return filters


def dct_coeff(n, k, N):
    return math.cos(math.pi / N * (n + 1. / 2.) * k)


def idct_coeff(n, k, N):
    return (int(0 == n) * (- 1 / 2) + math.cos(math.pi / N * (k + 1. / 2.) * n)) * math.sqrt(1 / (2. * N))


def rgb2yuv(image_rgb, image_yuv_out):
    image_yuv_out[:, 0, :, :] = 0.299 * image_rgb[:, 0, :, :].clone() + 0.587 * image_rgb[:, 1, :, :].clone() + 0.114 * image_rgb[:, 2, :, :].clone()
    image_yuv_out[:, 1, :, :] = -0.14713 * image_rgb[:, 0, :, :].clone() + -0.28886 * image_rgb[:, 1, :, :].clone() + 0.436 * image_rgb[:, 2, :, :].clone()
    image_yuv_out[:, 2, :, :] = 0.615 * image_rgb[:, 0, :, :].clone() + -0.51499 * image_rgb[:, 1, :, :].clone() + -0.10001 * image_rgb[:, 2, :, :].clone()


class JpegCompression(nn.Module):
    def __init__(self, device):
        super(JpegCompression, self).__init__()
        self.device = device
        self.dct_conv_weights = gen_filters(8, 8, dct_coeff).to(self.device)
        self.dct_conv_weights.unsqueeze_(1)

    def apply_conv(self, image, filter_type: str):
        filters = self.dct_conv_weights
        image_conv_channels = []
        for channel in range(image.shape[1]):
            image_yuv_ch = image[:, channel, :, :].unsqueeze_(1)  # <-- IPL001
            image_conv = F.conv2d(image_yuv_ch, filters, stride=8)
            image_conv = image_conv.permute(0, 2, 3, 1)
            image_conv = image_conv.reshape(image_conv.shape[0], -1)
            image_conv_channels.append(image_conv.unsqueeze(1))
        return torch.cat(image_conv_channels, dim=1)

    def forward(self, noised_and_cover):
        noised_image = noised_and_cover[0]
        image_yuv = torch.empty_like(noised_image)
        rgb2yuv(noised_image, image_yuv)
        image_dct = self.apply_conv(image_yuv, 'dct')
        noised_and_cover[0] = image_dct
        return noised_and_cover


def main():
    encoder = nn.Conv2d(3, 3, 3, padding=1)
    jpeg = JpegCompression(torch.device("cpu"))
    cover = torch.rand(2, 3, 16, 16)
    encoded = encoder(cover)
    noised_and_cover = jpeg([encoded, cover])
    loss = noised_and_cover[0].pow(2).mean()
    loss.backward()
    return loss.detach(), encoder.weight.grad


loss, grad = main()
