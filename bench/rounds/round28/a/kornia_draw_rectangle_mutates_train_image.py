# label: hazard silent
# why: kornia's draw_rectangle paints the boxes into the image tensor it is given, so drawing the supervision boxes on the training batch for logging silently rewrites the pixels that the segmentation loss is computed on afterwards.
# source: https://github.com/leggedrobotics/wild_visual_navigation/issues/20
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def draw_rectangle(
    image: torch.Tensor, rectangle: torch.Tensor, color: Optional[torch.Tensor] = None, fill: Optional[bool] = None
) -> torch.Tensor:
    batch, c, h, w = image.shape
    batch_rect, num_rectangle, num_points = rectangle.shape
    if batch != batch_rect:
        raise AssertionError("Image batch and rectangle batch must be equal")
    if num_points != 4:
        raise AssertionError("Number of points in rectangle must be 4")

    # clone rectangle, in case it's been expanded assignment from clipping causes problems
    rectangle = rectangle.long().clone()

    # clip rectangle to hxw bounds
    rectangle[:, :, 1::2] = torch.clamp(rectangle[:, :, 1::2], 0, h - 1)
    rectangle[:, :, ::2] = torch.clamp(rectangle[:, :, ::2], 0, w - 1)

    if color is None:
        color = torch.tensor([0.0] * c).expand(batch, num_rectangle, c)

    if fill is None:
        fill = False

    if len(color.shape) == 1:
        color = color.expand(batch, num_rectangle, c)

    for b in range(batch):
        for n in range(num_rectangle):
            image[b, :, int(rectangle[b, n, 1]) : int(rectangle[b, n, 3] + 1), rectangle[b, n, 0]] = color[b, n, :, None]  # <-- IPL004
            image[b, :, int(rectangle[b, n, 1]) : int(rectangle[b, n, 3] + 1), rectangle[b, n, 2]] = color[b, n, :, None]  # <-- IPL004
            image[b, :, rectangle[b, n, 1], int(rectangle[b, n, 0]) : int(rectangle[b, n, 2] + 1)] = color[b, n, :, None]  # <-- IPL004
            image[b, :, rectangle[b, n, 3], int(rectangle[b, n, 0]) : int(rectangle[b, n, 2] + 1)] = color[b, n, :, None]  # <-- IPL004

    return image


class TraversabilityNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))

    def forward(self, img):
        return self.encoder(img)


def log_supervision(img, boxes):
    # red boxes around the footprint patches that produced the labels
    color = torch.tensor([1.0, 0.0, 0.0])
    return draw_rectangle(img, boxes, color=color)


def main():
    model = TraversabilityNet()
    img = torch.rand(2, 3, 16, 16)
    boxes = torch.tensor([[[2, 2, 9, 9]], [[4, 3, 12, 14]]])
    supervision = torch.zeros(2, 1, 16, 16)
    for b in range(2):
        x1, y1, x2, y2 = boxes[b, 0].tolist()
        supervision[b, :, y1:y2 + 1, x1:x2 + 1] = 1.0

    vis = log_supervision(img, boxes)

    pred = model(img)
    loss = F.binary_cross_entropy_with_logits(pred, supervision)
    loss.backward()
    return pred.detach(), model.encoder[0].weight.grad


pred, conv_grad = main()
