# label: safe
# why: The PR's vertical_flip_keypoints starts from `keypoints.clone().reshape(-1, 2)`, so the in-place `sub_().neg_()` flips a private copy and the un-flipped view keeps its own keypoint targets.
# source: https://github.com/pytorch/vision/pull/8817
import torch
import torch.nn as nn
import torch.nn.functional as F


def vertical_flip_image(image: torch.Tensor) -> torch.Tensor:
    return image.flip(-2)


def vertical_flip_keypoints(keypoints: torch.Tensor, canvas_size: tuple) -> torch.Tensor:
    shape = keypoints.shape
    keypoints = keypoints.clone().reshape(-1, 2)
    keypoints[..., 1] = keypoints[..., 1].sub_(canvas_size[0] - 1).neg_()
    return keypoints.reshape(shape)


class RandomVerticalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, image, keypoints, canvas_size, force=False):
        if force or torch.rand(1).item() < self.p:
            return vertical_flip_image(image), vertical_flip_keypoints(keypoints, canvas_size)
        return image, keypoints


def keypoints_to_heatmaps(keypoints, canvas_size, heatmap_size, sigma=1.0):
    """keypoints: (N, K, 2) in pixel (x, y) of the canvas -> (N, K, h, w) gaussians."""
    h, w = heatmap_size
    stride_y = canvas_size[0] / h
    stride_x = canvas_size[1] / w
    ys = torch.arange(h, dtype=torch.float32).view(1, 1, h, 1)
    xs = torch.arange(w, dtype=torch.float32).view(1, 1, 1, w)
    mu_x = (keypoints[..., 0] / stride_x).unsqueeze(-1).unsqueeze(-1)
    mu_y = (keypoints[..., 1] / stride_y).unsqueeze(-1).unsqueeze(-1)
    return torch.exp(-((xs - mu_x) ** 2 + (ys - mu_y) ** 2) / (2 * sigma ** 2))


class SimplePoseNet(nn.Module):
    def __init__(self, num_keypoints=4):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        )
        self.final_layer = nn.Conv2d(32, num_keypoints, 1)

    def forward(self, x):
        return self.final_layer(self.backbone(x))


def flip_consistency_step(model, image, keypoints, canvas_size, flip):
    heatmap_size = (canvas_size[0] // 4, canvas_size[1] // 4)
    flipped_image, flipped_keypoints = flip(image, keypoints, canvas_size, force=True)
    pred = model(image)
    pred_flipped = model(flipped_image)
    target = keypoints_to_heatmaps(keypoints, canvas_size, heatmap_size)
    target_flipped = keypoints_to_heatmaps(flipped_keypoints, canvas_size, heatmap_size)
    loss = F.mse_loss(pred, target) + F.mse_loss(pred_flipped, target_flipped)
    return loss, target, target_flipped


def main():
    torch.manual_seed(0)
    canvas_size = (32, 32)
    model = SimplePoseNet(num_keypoints=4)
    flip = RandomVerticalFlip(p=0.5)
    image = torch.rand(2, 3, *canvas_size)
    keypoints = torch.tensor([[[5.0, 4.0], [20.0, 9.0], [11.0, 25.0], [27.0, 18.0]],
                              [[8.0, 30.0], [16.0, 16.0], [3.0, 12.0], [24.0, 6.0]]])
    loss, target, target_flipped = flip_consistency_step(model, image, keypoints, canvas_size, flip)
    loss.backward()
    grads = torch.cat([p.grad.flatten() for p in model.parameters()])
    return keypoints, loss, target, target_flipped, grads


keypoints, loss, target, target_flipped, grads = main()
print(float(loss))
