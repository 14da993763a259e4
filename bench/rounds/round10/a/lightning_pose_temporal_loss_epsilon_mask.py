# label: hazard raises
# why: rectify_epsilon zeroes the sub-epsilon entries of the per-keypoint temporal loss in place, but that tensor is the output of torch.linalg.norm, which the norm's backward reuses
# source: https://github.com/paninski-lab/lightning-pose/issues/56
from typing import List, Literal, Optional, Tuple

import torch
from torch.nn import functional as F

torch.manual_seed(0)


class Loss(torch.nn.Module):
    """Parent class for all losses."""

    def __init__(self, epsilon: float = 0.0, log_weight: float = 0.0, **kwargs) -> None:
        super().__init__()
        self.epsilon = torch.tensor(epsilon, dtype=torch.float)
        self.log_weight = torch.tensor(log_weight, dtype=torch.float)
        self.loss_name = "base"
        self.reduce_methods_dict = {"mean": torch.mean, "sum": torch.sum}

    @property
    def weight(self):
        return 1.0 / (2.0 * torch.exp(self.log_weight))

    def rectify_epsilon(self, loss: torch.Tensor) -> torch.Tensor:
        # loss values below epsilon as masked to zero
        loss[loss < self.epsilon] = 0.0  # <-- IPL001: loss is the linalg.norm output saved for its backward
        return loss

    def reduce_loss(self, loss: torch.Tensor, method: str = "mean") -> torch.Tensor:
        return self.reduce_methods_dict[method](loss)

    def log_loss(self, loss: torch.Tensor, stage: Literal["train", "val", "test"]) -> List[dict]:
        loss_dict = {"name": "%s_%s_loss" % (stage, self.loss_name), "value": loss, "prog_bar": True}
        weight_dict = {"name": "%s_weight" % self.loss_name, "value": self.weight}
        return [loss_dict, weight_dict]


class TemporalLoss(Loss):
    """Penalize temporal differences for each target.

    Motion model: x_t = x_(t-1) + e_t, e_t ~ N(0, s)
    """

    def __init__(self, epsilon: float = 0.0, log_weight: float = 0.0, **kwargs) -> None:
        super().__init__(epsilon=epsilon, log_weight=log_weight)
        self.loss_name = "temporal"

    def compute_loss(self, predictions: torch.Tensor) -> torch.Tensor:
        #  return shape: (batch - 1, num_targets)
        diffs = torch.diff(predictions, dim=0)
        # return shape: (batch - 1, num_keypoints, 2)
        reshape = torch.reshape(diffs, (diffs.shape[0], -1, 2))
        # return shape (batch - 1, num_keypoints)
        loss = torch.linalg.norm(reshape, ord=2, dim=2)
        return loss

    def __call__(self, keypoints_pred: torch.Tensor, stage: Optional[str] = None, **kwargs) -> Tuple[torch.Tensor, List[dict]]:
        elementwise_loss = self.compute_loss(predictions=keypoints_pred)
        epsilon_insensitive_loss = self.rectify_epsilon(loss=elementwise_loss)
        scalar_loss = self.reduce_loss(epsilon_insensitive_loss, method="mean")
        logs = self.log_loss(loss=scalar_loss, stage=stage)
        return self.weight * scalar_loss, logs


class RegressionHead(torch.nn.Module):
    def __init__(self, num_keypoints=7):
        super().__init__()
        self.backbone = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, 2, 1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(2))
        self.linear = torch.nn.Linear(16, 2 * num_keypoints)

    def forward(self, frames):
        return self.linear(self.backbone(frames).flatten(1))


model = RegressionHead()
frames = torch.randn(6, 1, 8, 8)            # consecutive unlabeled video frames
labeled_keypoints = torch.randn(6, 14)
keypoints_pred = model(frames)
supervised_loss = F.mse_loss(keypoints_pred, labeled_keypoints)
temporal = TemporalLoss(epsilon=0.15)
temporal_loss, logs = temporal(keypoints_pred, stage="train")
total_loss = supervised_loss + temporal_loss
total_loss.backward()
