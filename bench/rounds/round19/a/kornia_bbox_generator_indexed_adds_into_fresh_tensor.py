# label: safe
# why: bbox_generator accumulates the corners with indexed in-place adds into a freshly repeated zero tensor that no earlier op saved, so gradients to x_start/y_start/width/height are exact.
# source: https://github.com/kornia/kornia/blob/0c797db654043f7c5caf15273e5aba0831153cfd/kornia/geometry/bbox.py (pre-change version; refactored in kornia PR #3833)
import torch

torch.manual_seed(0)


def bbox_generator(x_start: torch.Tensor, y_start: torch.Tensor, width: torch.Tensor, height: torch.Tensor) -> torch.Tensor:
    if not (x_start.shape == y_start.shape and x_start.dim() in [0, 1]):
        raise AssertionError(f"`x_start` and `y_start` must be a scalar or (B,). Got {x_start}, {y_start}.")
    if not (width.shape == height.shape and width.dim() in [0, 1]):
        raise AssertionError(f"`width` and `height` must be a scalar or (B,). Got {width}, {height}.")
    bbox = torch.tensor([[[0, 0], [0, 0], [0, 0], [0, 0]]], device=x_start.device, dtype=x_start.dtype).repeat(
        1 if x_start.dim() == 0 else len(x_start), 1, 1
    )
    bbox[:, :, 0] += x_start.view(-1, 1)
    bbox[:, :, 1] += y_start.view(-1, 1)
    bbox[:, 1, 0] += width - 1
    bbox[:, 2, 0] += width - 1
    bbox[:, 2, 1] += height - 1
    bbox[:, 3, 1] += height - 1
    return bbox


def bbox_to_mask_soft(boxes: torch.Tensor, width: int, height: int, sharpness: float = 4.0) -> torch.Tensor:
    xs = torch.arange(width, dtype=boxes.dtype).view(1, 1, -1)
    ys = torch.arange(height, dtype=boxes.dtype).view(1, -1, 1)
    x0 = boxes[:, 0, 0].view(-1, 1, 1)
    x1 = boxes[:, 1, 0].view(-1, 1, 1)
    y0 = boxes[:, 0, 1].view(-1, 1, 1)
    y1 = boxes[:, 2, 1].view(-1, 1, 1)
    mx = torch.sigmoid(sharpness * (xs - x0)) * torch.sigmoid(sharpness * (x1 - xs))
    my = torch.sigmoid(sharpness * (ys - y0)) * torch.sigmoid(sharpness * (y1 - ys))
    return mx * my


# learnable crop parameters (e.g. a differentiable attention-crop module)
x_start = torch.tensor([1.0, 2.5], requires_grad=True)
y_start = torch.tensor([0.5, 1.0], requires_grad=True)
width = torch.tensor([4.0, 3.0], requires_grad=True)
height = torch.tensor([5.0, 4.0], requires_grad=True)
images = torch.rand(2, 8, 8)

boxes = bbox_generator(x_start, y_start, width, height)
masks = bbox_to_mask_soft(boxes, 8, 8)
score = (masks * images).sum() / masks.sum()
score.backward()
