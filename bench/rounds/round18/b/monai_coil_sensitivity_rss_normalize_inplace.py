# label: hazard raises
# why: CoilSensitivityModel normalises the predicted sensitivity maps with x /= root_sum_of_squares(x), but the rss computation (x ** 2) saved x for backward, so training the sensitivity network end-to-end fails
# source: https://github.com/Project-MONAI/MONAI/pull/4818
import torch
import torch.nn as nn

torch.manual_seed(0)


def root_sum_of_squares(x, spatial_dim):
    return torch.sqrt((x ** 2).sum(spatial_dim))


def ifftn_centered_t(ksp, spatial_dims=2):
    x = torch.view_as_complex(ksp.contiguous())
    x = torch.fft.ifftshift(x, dim=(-2, -1))
    x = torch.fft.ifftn(x, dim=(-2, -1), norm="ortho")
    x = torch.fft.fftshift(x, dim=(-2, -1))
    return torch.view_as_real(x)


def reshape_channel_complex_to_last_dim(x):
    b, c2, h, w = x.shape
    return x.view(b, 2, c2 // 2, h, w).permute(0, 2, 3, 4, 1)


def reshape_complex_to_channel_dim(x):
    b, c, h, w, two = x.shape
    return x.permute(0, 4, 1, 2, 3).reshape(b, 2 * c, h, w)


def reshape_channel_to_batch_dim(x):
    b, c, h, w, two = x.shape
    return x.contiguous().view(b * c, 1, h, w, two), b


def reshape_batch_channel_to_channel_dim(x, batch_size):
    bc, one, h, w, two = x.shape
    c = bc // batch_size
    return x.view(batch_size, c, h, w, two)


class ComplexUnet(nn.Module):
    def __init__(self, features=8):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(2, features, 3, padding=1), nn.LeakyReLU(0.1),
                                 nn.Conv2d(features, 2, 3, padding=1))

    def forward(self, x):
        x = reshape_complex_to_channel_dim(x)
        return reshape_channel_complex_to_last_dim(self.net(x))


class CoilSensitivityModel(nn.Module):
    def __init__(self, spatial_dims=2, coil_dim=1):
        super().__init__()
        self.conv_net = ComplexUnet()
        self.spatial_dims = spatial_dims
        self.coil_dim = coil_dim

    def get_fully_sampled_region(self, mask):
        left = right = mask.shape[-2] // 2
        while mask[..., right, :]:
            right += 1
        while mask[..., left, :]:
            left -= 1
        return left + 1, right

    def forward(self, masked_kspace, mask):
        left, right = self.get_fully_sampled_region(mask)
        num_low_freqs = right - left
        x = torch.zeros_like(masked_kspace)
        start = (mask.shape[-2] - num_low_freqs + 1) // 2
        x[..., start:start + num_low_freqs, :] = masked_kspace[..., start:start + num_low_freqs, :]
        x = ifftn_centered_t(x, spatial_dims=self.spatial_dims)
        x, b = reshape_channel_to_batch_dim(x)
        x = self.conv_net(x)
        x = reshape_batch_channel_to_channel_dim(x, b)
        # normalize the maps
        x /= root_sum_of_squares(x, spatial_dim=self.coil_dim).unsqueeze(self.coil_dim)  # <-- IPL001: x ** 2 in root_sum_of_squares saved x
        return x


class VarNetLikeModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.coil_sensitivity_model = CoilSensitivityModel()
        self.image_net = ComplexUnet()

    def forward(self, masked_kspace, mask):
        sens_maps = self.coil_sensitivity_model(masked_kspace, mask)
        coil_images = ifftn_centered_t(masked_kspace)
        # sensitivity-weighted coil combination (complex multiply with the conjugate maps)
        re = (coil_images[..., 0] * sens_maps[..., 0] + coil_images[..., 1] * sens_maps[..., 1]).sum(1, keepdim=True)
        im = (coil_images[..., 1] * sens_maps[..., 0] - coil_images[..., 0] * sens_maps[..., 1]).sum(1, keepdim=True)
        combined = torch.stack([re, im], dim=-1)
        return self.image_net(combined)


B, C, H, W = 1, 3, 8, 8
kspace = torch.randn(B, C, H, W, 2)
mask = torch.zeros(1, 1, 1, W, 1, dtype=torch.bool)
mask[..., 2:6, :] = True
mask[..., 0, :] = True
masked_kspace = kspace * mask
target = torch.randn(B, 1, H, W, 2)
model = VarNetLikeModel()
recon = model(masked_kspace, mask)
loss = nn.functional.l1_loss(recon, target)
loss.backward()
