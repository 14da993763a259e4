# label: hazard silent
# why: Before the KeyPoints PR added `keypoints.clone()`, elastic_keypoints built `index_xy = keypoints.to(dtype=torch.long)` from the caller's tensor; for integer (pixel) annotations `.to(long)` returns that very tensor, so `index_x.clamp_(...)` / `index_y.clamp_(...)` clip the caller's keypoints in place, and the un-augmented view of the sample is trained on coordinates pulled onto the border.
# source: https://github.com/pytorch/vision/pull/8817
import torch
import torch.nn as nn
import torch.nn.functional as F


def _create_identity_grid(size, device, dtype):
    sy, sx = size
    base_grid = torch.empty(1, sy, sx, 2, device=device, dtype=dtype)
    x_grid = torch.linspace((-sx + 1) / sx, (sx - 1) / sx, sx, device=device, dtype=dtype)
    base_grid[..., 0].copy_(x_grid)

    y_grid = torch.linspace((-sy + 1) / sy, (sy - 1) / sy, sy, device=device, dtype=dtype).unsqueeze_(-1)
    base_grid[..., 1].copy_(y_grid)

    return base_grid


def elastic_image(image, displacement):
    height, width = image.shape[-2:]
    grid = _create_identity_grid((height, width), device=image.device, dtype=image.dtype).add_(displacement)
    return F.grid_sample(image[None], grid, mode="bilinear", padding_mode="zeros", align_corners=False)[0]


def elastic_keypoints(keypoints, canvas_size, displacement):
    expected_shape = (1, canvas_size[0], canvas_size[1], 2)
    if displacement.shape != expected_shape:
        raise ValueError(f"Argument displacement shape should be {expected_shape}, but given {displacement.shape}")

    device = keypoints.device
    dtype = keypoints.dtype if torch.is_floating_point(keypoints) else torch.float32
    if displacement.dtype != dtype or displacement.device != device:
        displacement = displacement.to(dtype=dtype, device=device)

    original_shape = keypoints.shape
    keypoints = keypoints.reshape(-1, 2)

    id_grid = _create_identity_grid(canvas_size, device=device, dtype=dtype)
    inv_grid = id_grid.sub_(displacement)

    index_xy = keypoints.to(dtype=torch.long)
    index_x, index_y = index_xy[:, 0], index_xy[:, 1]
    # Unlike bounding boxes, this may not work well.
    index_x.clamp_(0, inv_grid.shape[2] - 1)  # <-- IPL004
    index_y.clamp_(0, inv_grid.shape[1] - 1)  # <-- IPL004

    t_size = torch.tensor(canvas_size[::-1], device=displacement.device, dtype=displacement.dtype)
    transformed_points = inv_grid[0, index_y, index_x, :].add_(1).mul_(0.5 * t_size).sub_(0.5)

    return transformed_points.to(keypoints.dtype).reshape(original_shape)


class ElasticTransform:
    def __init__(self, alpha=4.0, sigma=3.0):
        self.alpha = alpha
        self.sigma = sigma

    def make_params(self, size):
        dx = torch.rand([1, 1] + list(size)) * 2 - 1
        dy = torch.rand([1, 1] + list(size)) * 2 - 1
        kernel = torch.ones(1, 1, 5, 5) / 25.0
        dx = F.conv2d(dx, kernel, padding=2) * self.alpha / size[1]
        dy = F.conv2d(dy, kernel, padding=2) * self.alpha / size[0]
        return torch.cat([dx, dy], 1).permute([0, 2, 3, 1])  # 1 x H x W x 2

    def __call__(self, image, keypoints):
        canvas_size = tuple(image.shape[-2:])
        displacement = self.make_params(canvas_size)
        return elastic_image(image, displacement), elastic_keypoints(keypoints, canvas_size, displacement)


def keypoints_to_heatmaps(keypoints, canvas_size, sigma=1.5):
    h, w = canvas_size
    ys = torch.arange(h, dtype=torch.float32).view(1, h, 1)
    xs = torch.arange(w, dtype=torch.float32).view(1, 1, w)
    kp = keypoints.float()
    return torch.exp(-((xs - kp[:, 0, None, None]) ** 2 + (ys - kp[:, 1, None, None]) ** 2) / (2 * sigma ** 2))


class HeatmapNet(nn.Module):
    def __init__(self, num_keypoints=4):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, num_keypoints, 3, padding=1))

    def forward(self, x):
        return self.net(x)


def main():
    torch.manual_seed(0)
    canvas_size = (16, 16)
    image = torch.rand(3, *canvas_size)
    # integer pixel annotations; two joints were labelled just outside the crop
    keypoints = torch.tensor([[3, 4], [12, 9], [18, 6], [7, -2]])
    model = HeatmapNet()
    aug_image, aug_keypoints = ElasticTransform()(image, keypoints)
    # consistency training on the clean view and the elastic view
    pred_clean = model(image[None])[0]
    pred_aug = model(aug_image[None])[0]
    loss = F.mse_loss(pred_clean, keypoints_to_heatmaps(keypoints, canvas_size)) + \
        F.mse_loss(pred_aug, keypoints_to_heatmaps(aug_keypoints, canvas_size))
    loss.backward()
    return keypoints, aug_keypoints, loss, model.net[0].weight.grad


keypoints, aug_keypoints, loss, grad = main()
print(keypoints.tolist(), float(loss))
