# label: hazard silent
# why: DiceMetric.aggregate passes the cached synced buffer to do_metric_reduction, which zeroes its NaN entries in place (f[nans] = 0), so a later reduction of the same buffer counts empty classes as real zero scores.
# source: https://github.com/Project-MONAI/MONAI/issues/4172 (fix: commit c219221a52cd08a62611b23c744aa1d31bbfafae)
import torch
import torch.nn as nn

torch.manual_seed(0)


def do_metric_reduction(f: torch.Tensor, reduction="mean"):
    # some elements might be Nan (if ground truth y was missing (zeros))
    # we need to account for it
    nans = torch.isnan(f)
    not_nans = (~nans).float()

    t_zero = torch.zeros(1, device=f.device, dtype=f.dtype)
    if reduction == "none":
        return f, not_nans

    f[nans] = 0  # <-- IPL004: zeroes NaNs inside the metric's cached buffer
    if reduction == "mean":
        # 2 steps, first, mean by channel (accounting for nans), then by batch
        not_nans = not_nans.sum(dim=1)
        f = torch.where(not_nans > 0, f.sum(dim=1) / not_nans, t_zero)  # channel average
        not_nans = (not_nans > 0).float().sum(dim=0)
        f = torch.where(not_nans > 0, f.sum(dim=0) / not_nans, t_zero)  # batch average
    elif reduction == "mean_batch":
        not_nans = not_nans.sum(dim=0)
        f = torch.where(not_nans > 0, f.sum(dim=0) / not_nans, t_zero)  # batch average
    else:
        raise ValueError(f"Unsupported reduction: {reduction}")
    return f, not_nans


class Cumulative:
    def __init__(self):
        self._buffers = None
        self._synced_tensors = None
        self._synced = False
        self.reset()

    def reset(self):
        self._buffers = None
        self._synced_tensors = None
        self._synced = False

    def extend(self, *data) -> None:
        if self._buffers is None:
            self._buffers = [[] for _ in data]
        for b, d in zip(self._buffers, data):
            b.extend([x[0] for x in torch.split(d, 1, dim=0)])
        self._synced = False

    def _sync(self):
        if self._synced or self._buffers is None:
            return
        self._synced_tensors = [torch.stack(b, dim=0) for b in self._buffers]
        self._synced = True

    def get_buffer(self):
        self._sync()
        return self._synced_tensors[0] if len(self._synced_tensors) == 1 else self._synced_tensors


def compute_meandice(y_pred, y, include_background=True):
    n_len = len(y_pred.shape)
    reduce_axis = list(range(2, n_len))
    intersection = torch.sum(y * y_pred, dim=reduce_axis)
    y_o = torch.sum(y, reduce_axis)
    y_pred_o = torch.sum(y_pred, dim=reduce_axis)
    denominator = y_o + y_pred_o
    return torch.where(y_o > 0, (2.0 * intersection) / denominator, torch.tensor(float("nan"), device=y_o.device))


class DiceMetric(Cumulative):
    def __init__(self, include_background=True, reduction="mean"):
        super().__init__()
        self.include_background = include_background
        self.reduction = reduction

    def __call__(self, y_pred, y):
        ret = compute_meandice(y_pred=y_pred, y=y, include_background=self.include_background)
        self.extend(ret)
        return ret

    def aggregate(self):
        data = self.get_buffer()
        if not isinstance(data, torch.Tensor):
            raise ValueError("the data to aggregate must be PyTorch Tensor.")
        f, not_nans = do_metric_reduction(data, self.reduction)
        return f


model = nn.Conv2d(1, 3, 3, padding=1)
dice_metric = DiceMetric(include_background=True, reduction="mean")
val_loader = []
for k in range(2):
    img = torch.randn(2, 1, 8, 8)
    label = torch.zeros(2, 8, 8, dtype=torch.long)
    label[:, 2:6, 2:6] = 1
    if k == 1:
        label[0, 0:2, 0:2] = 2  # class 2 only appears in one sample
    val_loader.append((img, label))

with torch.no_grad():
    for val_images, val_labels in val_loader:
        val_outputs = model(val_images).argmax(dim=1)
        y_pred = nn.functional.one_hot(val_outputs, 3).permute(0, 3, 1, 2).float()
        y = nn.functional.one_hot(val_labels, 3).permute(0, 3, 1, 2).float()
        dice_metric(y_pred=y_pred, y=y)

mean_dice = dice_metric.aggregate()
per_class_dice, per_class_counts = do_metric_reduction(dice_metric.get_buffer(), "mean_batch")
