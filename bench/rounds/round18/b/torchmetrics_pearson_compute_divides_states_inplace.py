# label: hazard silent
# why: _pearson_corrcoef_compute divides the metric's accumulated var_x/var_y/corr_xy states in place, so every intermediate compute() rescales the running statistics and later results drift from the true correlation
# source: https://github.com/Lightning-AI/torchmetrics/pull/2765
import torch
from torch import Tensor

torch.manual_seed(0)


def _pearson_corrcoef_update(preds, target, mean_x, mean_y, var_x, var_y, corr_xy, num_prior):
    num_obs = preds.shape[0]
    mx_new = (num_prior * mean_x + preds.sum(0)) / (num_prior + num_obs)
    my_new = (num_prior * mean_y + target.sum(0)) / (num_prior + num_obs)
    num_prior = num_prior + num_obs
    var_x = var_x + ((preds - mx_new) * (preds - mean_x)).sum(0)
    var_y = var_y + ((target - my_new) * (target - mean_y)).sum(0)
    corr_xy = corr_xy + ((preds - mx_new) * (target - mean_y)).sum(0)
    return mx_new, my_new, var_x, var_y, corr_xy, num_prior


def _pearson_corrcoef_compute(var_x: Tensor, var_y: Tensor, corr_xy: Tensor, nb: Tensor) -> Tensor:
    var_x /= nb - 1  # <-- IPL004: divides the metric state passed in by compute()
    var_y /= nb - 1  # <-- IPL004: same for var_y
    corr_xy /= nb - 1  # <-- IPL004: same for corr_xy
    corrcoef = (corr_xy / (var_x * var_y).sqrt()).squeeze()
    return torch.clamp(corrcoef, -1.0, 1.0)


class PearsonCorrCoef:
    def __init__(self):
        self.mean_x = torch.zeros(1)
        self.mean_y = torch.zeros(1)
        self.var_x = torch.zeros(1)
        self.var_y = torch.zeros(1)
        self.corr_xy = torch.zeros(1)
        self.n_total = torch.zeros(1)

    def update(self, preds, target):
        self.mean_x, self.mean_y, self.var_x, self.var_y, self.corr_xy, self.n_total = _pearson_corrcoef_update(
            preds, target, self.mean_x, self.mean_y, self.var_x, self.var_y, self.corr_xy, self.n_total)

    def compute(self):
        return _pearson_corrcoef_compute(self.var_x, self.var_y, self.corr_xy, self.n_total)

    def __call__(self, preds, target):
        self.update(preds, target)
        return self.compute()


y = torch.randn(100)
y_pred = y + torch.randn(y.shape) / 5

pearson_full = PearsonCorrCoef()
correlation = pearson_full(y_pred, y)

pearson = PearsonCorrCoef()
epoch_values = []
for lower, upper in [(0, 33), (33, 66), (66, 99), (99, 100)]:
    pearson.update(y_pred[lower:upper], y[lower:upper])
    epoch_values.append(pearson.compute())

final_correlation = pearson.compute()
running_var_x = pearson.var_x
