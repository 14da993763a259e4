# label: hazard raises
# why: the coil-sensitivity model normalizes the predicted maps with `x /= root_sum_of_squares(x)`, but x**2 inside root_sum_of_squares saved x for backward, so the in-place division breaks the backward pass.
# source: https://github.com/Project-MONAI/MONAI/commit/85d2ab125f957cb6e50f8db7a031684b3d75405e
import torch
import torch.nn as nn

torch.manual_seed(0)


def root_sum_of_squares(x, spatial_dim):
    rss_x = (x**2).sum(spatial_dim) ** 0.5
    return rss_x


def ifftn_centered_t(ksp, spatial_dims=2):
    # (..., H, W, 2) real/imag k-space -> (..., H, W, 2) image
    dims = tuple(range(-spatial_dims - 1, -1))
    data = torch.view_as_complex(ksp.contiguous())
    data = torch.fft.ifftshift(data, dim=[d + 1 for d in dims])
    data = torch.fft.ifftn(data, dim=[d + 1 for d in dims], norm="ortho")
    data = torch.fft.fftshift(data, dim=[d + 1 for d in dims])
    return torch.view_as_real(data)


class ComplexConvNet(nn.Module):
    """(B*C, 1, H, W, 2) -> (B*C, 1, H, W, 2), real/imag as conv channels"""

    def __init__(self, features=8):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(2, features, 3, padding=1), nn.LeakyReLU(0.1), nn.Conv2d(features, 2, 3, padding=1)
        )

    def forward(self, x):
        x = x.squeeze(1).permute(0, 3, 1, 2)
        x = self.net(x)
        return x.permute(0, 2, 3, 1).unsqueeze(1)


class CoilSensitivityModel(nn.Module):
    def __init__(self, spatial_dims=2, coil_dim=1):
        super().__init__()
        self.conv_net = ComplexConvNet()
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
        x[..., start : start + num_low_freqs, :] = masked_kspace[..., start : start + num_low_freqs, :]
        x = ifftn_centered_t(x, spatial_dims=self.spatial_dims)
        b = x.shape[0]
        x = x.reshape(-1, 1, *x.shape[2:])  # coils to batch
        x = self.conv_net(x)
        x = x.reshape(b, -1, *x.shape[2:])  # batch back to coils
        x /= root_sum_of_squares(x, spatial_dim=self.coil_dim).unsqueeze(self.coil_dim)  # <-- IPL001: x**2 saved x for backward
        return x


model = CoilSensitivityModel()
kspace = torch.randn(1, 4, 8, 8, 2)
mask = torch.zeros(1, 1, 1, 8, 1, dtype=torch.bool)
mask[..., 2:6, :] = True
mask[..., 0, :] = True
masked_kspace = kspace * mask

sens_maps = model(masked_kspace, mask)
target = torch.randn_like(sens_maps)
loss = (sens_maps - target).abs().mean()
loss.backward()
grad = model.conv_net.net[0].weight.grad.clone()
