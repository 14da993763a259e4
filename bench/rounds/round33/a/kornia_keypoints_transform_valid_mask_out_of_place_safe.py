# label: safe
# why: After the fix the narrowed visibility mask is computed out of place by transform_valid_mask(...) = valid_mask & inside_image(...) and stored on the transformed object only, so the original keypoints keep their own mask even though the out-of-place transform initially shared it.
# source: https://github.com/kornia/kornia/commit/29da04418affb32b3e15a03d7ab8e841c7169735
from typing import Dict, List, Optional, Tuple, Union

import torch
import torch.nn as nn
from torch import Size, Tensor


def convert_points_to_homogeneous(points: Tensor) -> Tensor:
    return torch.nn.functional.pad(points, [0, 1], "constant", 1.0)


def convert_points_from_homogeneous(points: Tensor, eps: float = 1e-8) -> Tensor:
    z_vec = points[..., -1:]
    mask = torch.abs(z_vec) > eps
    scale = torch.where(mask, 1.0 / (z_vec + eps), torch.ones_like(z_vec))
    return scale * points[..., :-1]


def transform_points(trans_01: Tensor, points_1: Tensor) -> Tensor:
    points_1_h = convert_points_to_homogeneous(points_1)
    points_0_h = torch.bmm(points_1_h, trans_01.permute(0, 2, 1))
    return convert_points_from_homogeneous(points_0_h)


def inside_image(coords: Tensor, image_size: Tensor):
    """
    Args:
        coords: (B, N, 2) or (N, 2) in WH order
        image_size: (B, 2) or (2,) in WH order
    """
    return (
        (coords[..., 0] >= 0)
        & (coords[..., 0] < image_size[..., None, 0])
        & (coords[..., 1] >= 0)
        & (coords[..., 1] < image_size[..., None, 1])
    )


def transform_valid_mask(data: Tensor, valid_mask: Tensor, params: Optional[Dict[str, Tensor]]):
    if params is not None:
        if "output_size" in params:
            image_size = params["output_size"]
        else:
            image_size = params["forward_input_shape"][-2:]
            if data.ndim == 3:
                image_size = image_size[None].repeat(data.shape[0], 1)

    return valid_mask & inside_image(data, image_size)


class Keypoints:
    """2D Keypoints containing Nx2 or BxNx2 points."""

    def __init__(
        self,
        keypoints: Union[Tensor, List[Tensor]],
        raise_if_not_floating_point: bool = True,
        valid_mask: Optional[Tensor] = None,
    ) -> None:
        self._N: Optional[List[int]] = None
        self._valid_mask: Optional[Tensor] = valid_mask

        if not isinstance(keypoints, Tensor):
            raise TypeError(f"Input keypoints is not a Tensor. Got: {type(keypoints)}.")

        if not keypoints.is_floating_point():
            if raise_if_not_floating_point:
                raise ValueError(f"Coordinates must be in floating point. Got {keypoints.dtype}")
            keypoints = keypoints.float()

        if not (2 <= keypoints.ndim <= 3 and keypoints.shape[-1:] == (2,)):
            raise ValueError(f"Keypoints shape must be (N, 2) or (B, N, 2). Got {keypoints.shape}.")

        self._is_batched = False if keypoints.ndim == 2 else True

        self._data = keypoints
        if self._valid_mask is None:
            self._valid_mask = self._data.new_ones(self._data.shape[:-1]).to(torch.bool)

    @property
    def shape(self) -> Union[Tuple[int, ...], Size]:
        return self.data.shape

    @property
    def data(self) -> Tensor:
        return self._data

    @property
    def valid_mask(self) -> Tensor:
        """Returns keypoints visibility."""
        return self._valid_mask

    def transform_keypoints(self, M: Tensor, params: Dict[str, Tensor], inplace: bool = False) -> "Keypoints":
        r"""Apply a transformation matrix to the 2D keypoints."""
        if not 2 <= M.ndim <= 3 or M.shape[-2:] != (3, 3):
            raise ValueError(f"The transformation matrix shape must be (3, 3) or (B, 3, 3). Got {M.shape}.")

        transformed_boxes = transform_points(M, self._data)
        transformed_valid_mask = transform_valid_mask(transformed_boxes, self._valid_mask, params)

        if inplace:
            self._data = transformed_boxes
            self._valid_mask = transformed_valid_mask
            return self

        return Keypoints(transformed_boxes, False, transformed_valid_mask)

    def transform_keypoints_(self, M: Tensor, params: Dict[str, Tensor]) -> "Keypoints":
        """Inplace version of :func:`Keypoints.transform_keypoints`"""
        return self.transform_keypoints(M, params=params, inplace=True)

    def clone(self) -> "Keypoints":
        return Keypoints(self._data.clone(), False, self._valid_mask.clone())


def affine_matrix(angle: Tensor, translation: Tensor, center: Tensor) -> Tensor:
    cos, sin = torch.cos(angle), torch.sin(angle)
    B = angle.shape[0]
    M = torch.zeros(B, 3, 3)
    M[:, 0, 0], M[:, 0, 1] = cos, -sin
    M[:, 1, 0], M[:, 1, 1] = sin, cos
    M[:, :2, 2] = center - torch.stack([cos * center[:, 0] - sin * center[:, 1],
                                        sin * center[:, 0] + cos * center[:, 1]], -1) + translation
    M[:, 2, 2] = 1.0
    return M


class KeypointRegressor(nn.Module):
    def __init__(self, num_kpts=6):
        super().__init__()
        self.num_kpts = num_kpts
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(8, num_kpts * 2)

    def forward(self, img):
        return self.head(self.backbone(img).flatten(1)).view(-1, self.num_kpts, 2) * 32.0


def masked_kpt_loss(pred: Tensor, kpts: Keypoints) -> Tensor:
    w = kpts.valid_mask.float()
    return (((pred - kpts.data) ** 2).sum(-1) * w).sum() / w.sum().clamp(min=1.0)


def main():
    torch.manual_seed(0)
    B, N, H, W = 2, 6, 32, 32
    params = {"output_size": torch.tensor([[W, H]] * B)}
    model = KeypointRegressor(N)
    images = torch.rand(B, 3, H, W)
    kpts = Keypoints(torch.rand(B, N, 2) * 28 + 2)

    # augmented view: rotate around the centre (out-of-place), then shift it (in place)
    M_rot = affine_matrix(torch.tensor([0.3, -0.2]), torch.zeros(B, 2), torch.full((B, 2), 16.0))
    aug_kpts = kpts.transform_keypoints(M_rot, params)
    M_shift = affine_matrix(torch.zeros(B), torch.tensor([[12.0, 0.0], [-12.0, 6.0]]), torch.zeros(B, 2))
    aug_kpts.transform_keypoints_(M_shift, params)

    aug_images = torch.roll(images, shifts=(3, 3), dims=(2, 3))
    loss = masked_kpt_loss(model(images), kpts) + masked_kpt_loss(model(aug_images), aug_kpts)
    loss.backward()
    return kpts.valid_mask, aug_kpts.valid_mask, loss, model


orig_valid, aug_valid, loss, model = main()
print(orig_valid.int(), aug_valid.int(), float(loss))
