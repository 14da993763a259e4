# label: hazard silent
# why: Resample normalizes the sampling grid with `grid_t[i] = 2.0 * grid_t[i] / (dim - 1.0)`, and when the caller's grid is already a tensor of the right dtype grid_t *is* that grid, so resampling the label with the same grid afterwards normalizes it a second time.
# source: https://github.com/Project-MONAI/MONAI/commit/4ef11bf2a5b717386555003bfb53f6a7dfa7da8d
import torch
import torch.nn.functional as F

torch.manual_seed(0)


def create_grid(spatial_size):
    ranges = [torch.linspace(-(d - 1.0) / 2.0, (d - 1.0) / 2.0, int(d)) for d in spatial_size]
    coords = torch.stack(torch.meshgrid(*ranges, indexing="ij"))
    return torch.cat([coords, torch.ones_like(coords[:1])])


def convert_to_dst_type(src, dst):
    # returns `src` itself when it already matches dst's type, dtype and device
    if isinstance(src, torch.Tensor) and src.dtype == dst.dtype and src.device == dst.device:
        return src, None, None
    return torch.as_tensor(src, dtype=dst.dtype, device=dst.device), None, None


class Resample(object):
    def __init__(self, mode="bilinear", padding_mode="border"):
        self.mode = mode
        self.padding_mode = padding_mode

    def __call__(self, img, grid, mode=None):
        img_t = img
        grid_t, *_ = convert_to_dst_type(grid, img_t)
        for i, dim in enumerate(img_t.shape[1:]):
            grid_t[i] = 2.0 * grid_t[i] / (dim - 1.0)  # <-- IPL004: normalizes the caller's grid in place
        grid_t = grid_t[:-1] / grid_t[-1:]
        index_ordering = list(range(img_t.ndimension() - 2, -1, -1))
        grid_t = grid_t[index_ordering]
        grid_t = grid_t.permute(list(range(grid_t.ndimension()))[1:] + [0])
        return F.grid_sample(
            img_t.unsqueeze(0), grid_t.unsqueeze(0), mode=mode or self.mode,
            padding_mode=self.padding_mode, align_corners=True,
        )[0]


# random elastic-like deformation shared by the image and its segmentation
grid = create_grid((12, 12))
grid[:2] += torch.randn(2, 12, 12) * 0.8

image = torch.rand(1, 12, 12)
label = (image > 0.5).float()
resampler = Resample()
image_out = resampler(image, grid)
label_out = resampler(label, grid, mode="nearest")
