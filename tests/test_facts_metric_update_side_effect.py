"""A metric's ``update`` that centres the caller's batch through a helper (torchmetrics'
Procrustes disparity, round 35):

``evaluate(model, batches, metric)`` calls ``metric.update(pred_points, target_points)`` and
then scores ``pred_points`` again; ``update`` returns nothing and passes the batch to
``procrustes_disparity``, which centres ``dataset1`` in place to compute its result. Two facts
were wrong:

- ``metric`` was taken for a dict, because ``.update(...)`` is how one fills a dict, although
  every call passes an instance of the file's own metric class;
- the write was a side effect of computing the helper's result, but ``update`` returns
  nothing, and a procedure's writes were taken as its purpose.

Centring out of place is clean. The programs run with torch.
"""

from __future__ import annotations

from programs import codes, run

METRIC = """
import torch


def procrustes_disparity(dataset1, dataset2):
    {centre}
    return (dataset1 - dataset2).square().sum(dim=[1, 2])


class ProcrustesDisparity:
    def __init__(self):
        self.disparity = torch.tensor(0.0)

    def update(self, dataset1, dataset2):
        disparity = procrustes_disparity(dataset1, dataset2)
        self.disparity += disparity.sum()


def evaluate(model, batches, metric):
    errors = []
    with torch.no_grad():
        for features, target_points in batches:
            pred_points = model(features).view(-1, 3, 2)
            metric.update(pred_points, target_points)
            errors.append((pred_points - target_points).norm(dim=-1).mean())
    return torch.stack(errors)


torch.manual_seed(0)
model = torch.nn.Linear(4, 6)
batches = [(torch.randn(5, 4), torch.randn(5, 3, 2) + 3.0) for _ in range(2)]
errors = evaluate(model, batches, ProcrustesDisparity())
"""

IN_PLACE = "dataset1 -= dataset1.mean(dim=1, keepdim=True)"
OUT_OF_PLACE = "dataset1 = dataset1 - dataset1.mean(dim=1, keepdim=True)"


def test_the_metric_update_centres_the_callers_predictions() -> None:
    hazard = METRIC.format(centre=IN_PLACE)
    assert codes(hazard) == [(6, "IPL004")]
    safe = METRIC.format(centre=OUT_OF_PLACE)
    assert codes(safe) == []
    wrong, right = run(hazard)["errors"], run(safe)["errors"]
    assert (wrong - right).abs().max() > 1e-3  # type: ignore[operator]
