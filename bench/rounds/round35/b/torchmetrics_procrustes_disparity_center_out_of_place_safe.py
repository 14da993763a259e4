# label: safe
# why: the review fix centers out of place (`dataset1 = dataset1 - dataset1.mean(...)`), so the following `dataset1 /= linalg.norm(...)` divides a fresh local copy; the caller's predictions and targets keep their image coordinates and the landmark error computed after the metric update is unaffected.
# source: https://github.com/Lightning-AI/torchmetrics/commit/8c16836c931772d778078645a9883e872fc51f00
from typing import Any, Literal, Tuple, Union
import warnings

import torch
from torch import Tensor, linalg

torch.manual_seed(0)


def rank_zero_warn(message, category=UserWarning):
    warnings.warn(message, category)


def _check_same_shape(preds: Tensor, target: Tensor) -> None:
    if preds.shape != target.shape:
        raise RuntimeError(f"Predictions and targets are expected to have the same shape, but got {preds.shape} and {target.shape}.")


def procrustes_disparity(
    dataset1: Tensor, dataset2: Tensor, return_all: bool = False
) -> Union[Tensor, Tuple[Tensor, Tensor, Tensor]]:
    """Runs procrustrus analysis on a batch of data points."""
    _check_same_shape(dataset1, dataset2)
    if dataset1.ndim != 3:
        raise ValueError(
            "Expected both datasets to be 3D tensors of shape (N, M, D), where N is the batch size, M is the number of"
            f" data points and D is the dimensionality of the data points, but got {dataset1.ndim} dimensions."
        )

    dataset1 = dataset1 - dataset1.mean(dim=1, keepdim=True)
    dataset2 = dataset2 - dataset2.mean(dim=1, keepdim=True)
    dataset1 /= linalg.norm(dataset1, dim=[1, 2], keepdim=True)
    dataset2 /= linalg.norm(dataset2, dim=[1, 2], keepdim=True)

    try:
        u, w, v = linalg.svd(torch.matmul(dataset2.transpose(1, 2), dataset1).transpose(1, 2), full_matrices=False)
    except Exception as ex:
        rank_zero_warn(
            f"SVD calculation in procrustes_disparity failed with exception {ex}. Returning 0 disparity and identity"
            " scale/rotation.",
            UserWarning,
        )
        return torch.tensor(0.0), torch.ones(dataset1.shape[0]), torch.eye(dataset1.shape[2])

    rotation = torch.matmul(u, v)
    scale = w.sum(1, keepdim=True)
    dataset2 = scale[:, None] * torch.matmul(dataset2, rotation.transpose(1, 2))
    disparity = (dataset1 - dataset2).square().sum(dim=[1, 2])
    if return_all:
        return disparity, scale, rotation
    return disparity


class Metric:
    def __init__(self, **kwargs: Any) -> None:
        self._defaults = {}

    def add_state(self, name, default, dist_reduce_fx=None):
        self._defaults[name] = default.clone()
        setattr(self, name, default.clone())

    def reset(self):
        for name, default in self._defaults.items():
            setattr(self, name, default.clone())

    def __call__(self, *args, **kwargs):
        self.update(*args, **kwargs)
        return self.compute()


class ProcrustesDisparity(Metric):
    full_state_update: bool = False
    is_differentiable: bool = False
    higher_is_better: bool = False

    def __init__(self, reduction: Literal["mean", "sum"] = "mean", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if reduction not in ("mean", "sum"):
            raise ValueError(f"Argument `reduction` must be one of ['mean', 'sum'], got {reduction}")
        self.reduction = reduction
        self.add_state("disparity", default=torch.tensor(0.0), dist_reduce_fx="sum")
        self.add_state("total", default=torch.tensor(0), dist_reduce_fx="sum")

    def update(self, dataset1: torch.Tensor, dataset2: torch.Tensor) -> None:
        """Update the Procrustes Disparity with the given datasets."""
        disparity: Tensor = procrustes_disparity(dataset1, dataset2)
        self.disparity += disparity.sum()
        self.total += disparity.numel()

    def compute(self) -> torch.Tensor:
        if self.reduction == "mean":
            return self.disparity / self.total
        return self.disparity


class LandmarkRegressor(torch.nn.Module):
    def __init__(self, in_features: int, num_points: int, dim: int = 2) -> None:
        super().__init__()
        self.num_points = num_points
        self.dim = dim
        self.net = torch.nn.Sequential(torch.nn.Linear(in_features, 32), torch.nn.Tanh(),
                                       torch.nn.Linear(32, num_points * dim))

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x).view(x.shape[0], self.num_points, self.dim)


def evaluate(model, batches, metric):
    l2_errors = []
    with torch.no_grad():
        for features, target_points in batches:
            pred_points = model(features)
            metric.update(pred_points, target_points)
            # mean landmark error in image coordinates, computed after the metric update
            l2_errors.append((pred_points - target_points).norm(dim=-1).mean())
    return metric.compute(), torch.stack(l2_errors)


model = LandmarkRegressor(in_features=8, num_points=12)
metric = ProcrustesDisparity()
batches = [(torch.randn(4, 8), 3.0 * torch.randn(4, 12, 2) + 5.0) for _ in range(3)]
disparity, landmark_errors = evaluate(model, batches, metric)
first_targets = batches[0][1]
