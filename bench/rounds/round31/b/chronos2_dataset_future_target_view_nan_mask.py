# label: hazard silent
# why: Chronos2Dataset._construct_slice takes `task_future_target` as a view of the stored `task_past_tensor` and then masks the covariate rows with `task_future_target[task_n_targets:] = torch.nan`; the write lands in the dataset's own tensor, so later training slices read NaN covariates in their context and future_covariates.
# source: https://github.com/amazon-science/chronos-forecasting/pull/379
from enum import Enum

import torch
import torch.nn as nn

torch.manual_seed(0)


class DatasetMode(str, Enum):
    TRAIN = "train"
    VALIDATION = "validation"
    TEST = "test"


def left_pad_and_cat_2D(tensors):
    """
    Left pads tensors in the list to the length of the longest tensor along the second axis, then concats
    these equal length tensors along the first axis.
    """
    max_len = max(tensor.shape[-1] for tensor in tensors)
    padded = []
    for tensor in tensors:
        n_variates, length = tensor.shape
        if length < max_len:
            padding = torch.full((n_variates, max_len - length), fill_value=torch.nan, device=tensor.device)
            tensor = torch.cat([padding, tensor], dim=-1)
        padded.append(tensor)
    return torch.cat(padded, dim=0)


class Chronos2Dataset:
    def __init__(self, tasks, context_length, prediction_length, batch_size, min_past=4, mode=DatasetMode.TRAIN):
        # each task: (past_tensor, future_tensor, n_targets, n_covariates, n_future_covariates)
        self.tasks = tasks
        self.context_length = context_length
        self.prediction_length = prediction_length
        self.batch_size = batch_size
        self.min_past = min_past
        self.mode = mode

    def _construct_slice(self, task_idx: int):
        (
            task_past_tensor,  # shape:  (task_n_targets + task_n_covariates, history_length)
            task_future_tensor,
            task_n_targets,
            task_n_covariates,
            task_n_future_covariates,
        ) = self.tasks[task_idx]
        task_n_past_only_covariates = task_n_covariates - task_n_future_covariates

        full_length = task_past_tensor.shape[-1]

        if self.mode == DatasetMode.TRAIN:
            # slice a random subsequence from the full series
            slice_idx = int(torch.randint(self.min_past, full_length - self.prediction_length + 1, ()))
        elif self.mode == DatasetMode.VALIDATION:
            slice_idx = full_length - self.prediction_length
        else:
            slice_idx = full_length

        if slice_idx >= self.context_length:
            task_context = task_past_tensor[:, slice_idx - self.context_length : slice_idx]
        else:
            task_context = task_past_tensor[:, :slice_idx]

        if self.mode in [DatasetMode.TRAIN, DatasetMode.VALIDATION]:
            # the first task_n_targets elements in task_context_tensor are the targets
            task_future_target = task_past_tensor[:, slice_idx : slice_idx + self.prediction_length]
            # mask out all rows corresponding to covariates
            task_future_target[task_n_targets:] = torch.nan  # <-- IPL002

            if task_n_future_covariates > 0:
                # the last task_n_future_covariates elements in task_context_tensor are the known covariates
                task_future_covariates = task_past_tensor[
                    -task_n_future_covariates:, slice_idx : slice_idx + self.prediction_length
                ]
            else:
                task_future_covariates = torch.zeros((0, self.prediction_length))

            task_future_covariates_padding = torch.full(
                (task_n_targets + task_n_past_only_covariates, self.prediction_length),
                fill_value=torch.nan,
            )
            task_future_covariates = torch.cat([task_future_covariates_padding, task_future_covariates], dim=0)
        else:
            task_future_target = None
            task_future_covariates = task_future_tensor

        return task_context, task_future_target, task_future_covariates, task_n_targets

    def _build_batch(self, task_indices):
        batch_context_tensor_list = []
        batch_future_target_tensor_list = []
        batch_future_covariates_tensor_list = []
        for task_idx in task_indices:
            task_context, task_future_target, task_future_covariates, task_n_targets = self._construct_slice(task_idx)
            batch_context_tensor_list.append(task_context)
            batch_future_target_tensor_list.append(task_future_target)
            batch_future_covariates_tensor_list.append(task_future_covariates)
        return {
            "context": left_pad_and_cat_2D(batch_context_tensor_list),
            "future_target": torch.cat(batch_future_target_tensor_list, dim=0),
            "future_covariates": torch.cat(batch_future_covariates_tensor_list, dim=0),
        }

    def _generate_train_batches(self):
        while True:
            current_batch_size = 0
            task_indices = []
            while current_batch_size < self.batch_size:
                task_idx = int(torch.randint(len(self.tasks), ()))
                task_indices.append(task_idx)
                current_batch_size += self.tasks[task_idx][0].shape[0]
            yield self._build_batch(task_indices)

    def __iter__(self):
        return self._generate_train_batches()


class TinyForecaster(nn.Module):
    """Stand-in for Chronos2Model: NaNs are treated as missing values via a mask channel."""

    def __init__(self, context_length, prediction_length):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2 * context_length + 2 * prediction_length, 32), nn.GELU(),
                                 nn.Linear(32, prediction_length))

    def forward(self, context, future_covariates):
        ctx_mask = torch.isnan(context).float()
        cov_mask = torch.isnan(future_covariates).float()
        features = torch.cat([torch.nan_to_num(context), ctx_mask, torch.nan_to_num(future_covariates), cov_mask], dim=-1)
        return self.net(features)


def make_task(length=40):
    t = torch.arange(length, dtype=torch.float32)
    target = torch.sin(t / 4) + 0.1 * torch.randn(length)
    past_only_cov = torch.cos(t / 3)
    known_cov = (t % 7 == 0).float()
    past_tensor = torch.stack([target, past_only_cov, known_cov])
    return (past_tensor, None, 1, 2, 1)


def main():
    context_length, prediction_length = 12, 4
    dataset = Chronos2Dataset([make_task(), make_task()], context_length, prediction_length, batch_size=6)
    model = TinyForecaster(context_length, prediction_length)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for step, batch in zip(range(6), dataset):
        context = batch["context"]
        if context.shape[-1] < context_length:
            padding = torch.full((context.shape[0], context_length - context.shape[-1]), torch.nan)
            context = torch.cat([padding, context], dim=-1)
        pred = model(context, batch["future_covariates"])
        target = batch["future_target"]
        mask = ~torch.isnan(target)
        loss = ((pred - torch.nan_to_num(target)) ** 2 * mask).sum() / mask.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    stored_covariates = torch.stack([task[0][1:] for task in dataset.tasks])
    return torch.stack(losses), stored_covariates


losses, stored_covariates = main()
