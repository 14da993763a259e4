# label: safe
# why: scale_and_mask multiplies by the scale first ("triggers a copy, avoiding in-place op errors") and only then masks that fresh product in place, so neither the log-prob tensor nor anything saved for backward is touched
# source: https://github.com/pyro-ppl/pyro/blob/b45ed142b27437d6cfce95a65d6f83a89d254b15/pyro/distributions/util.py (code changed by https://github.com/pyro-ppl/pyro/pull/2044)
import torch
from torch.distributions.utils import broadcast_all


def scale_and_mask(tensor, scale=1.0, mask=None):
    """
    Scale and mask a tensor, broadcasting and avoiding unnecessary ops.
    """
    if isinstance(tensor, (int, float)):
        return tensor
    if isinstance(scale, (int, float)) and scale == 1.0 and mask is None:
        return tensor
    if mask is None:
        return tensor * scale
    tensor, mask = broadcast_all(tensor, mask)
    tensor = tensor * scale  # triggers a copy, avoiding in-place op errors
    tensor.masked_fill_(mask == 0, 0.)
    return tensor


torch.manual_seed(0)
loc = torch.zeros(6, requires_grad=True)
log_scale = torch.zeros(6, requires_grad=True)
obs = torch.randn(6)
mask = torch.tensor([1, 1, 0, 1, 0, 1], dtype=torch.bool)

dist = torch.distributions.Normal(loc, log_scale.exp())
log_prob = dist.log_prob(obs)
elbo_terms = scale_and_mask(log_prob, scale=0.5, mask=mask)
loss = -elbo_terms.sum()
loss.backward()
loc_grad = loc.grad
log_scale_grad = log_scale.grad
