# label: hazard silent
# why: the start and end columns are views split out of the caller's span tensor, so multiplying them by the mask rewrites the caller's spans, which it reads again.
import torch

torch.manual_seed(0)


def span_endpoints(spans, span_mask):
    starts, ends = [index.squeeze(-1) for index in spans.split(1, dim=-1)]
    starts *= span_mask  # <-- IPL004: writes the caller's spans through a view
    ends *= span_mask  # <-- IPL004: writes the caller's spans through a view
    return starts, ends


spans = torch.tensor([[[0, 2], [1, 3], [-1, -1]]])
span_mask = (spans[:, :, 0] >= 0).long()
starts, ends = span_endpoints(spans, span_mask)
widths = spans[:, :, 1] - spans[:, :, 0]
