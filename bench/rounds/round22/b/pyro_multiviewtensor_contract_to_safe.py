# label: safe
# why: contract_to starts from the Python number 0, so the first result += ... rebinds result to a fresh sum tensor and the later in-place adds only accumulate into that private accumulator; no stored cost tensor is aliased and AddBackward saves nothing.
# source: https://github.com/pyro-ppl/pyro/blob/e9b7f97ebd8bb4008b68e3b8a7798aac822f56e8/pyro/infer/util.py (MultiViewTensor.contract_to, parent of e9b7f97)
import torch
import torch.nn as nn

torch.manual_seed(0)


def reduce_to_target(source, target):
    """
    Sums out any dimensions in source that are of size > 1 in source but of size 1 in target.
    This preserves source.dim().
    """
    if source.dim() > target.dim():
        raise ValueError
    for k in range(1, 1 + source.dim()):
        if source.size(-k) > target.size(-k):
            source = source.sum(-k, keepdim=True)
    return source


def sum_leftmost(value, dim):
    if dim < 0:
        dim += value.dim()
    if dim == 0:
        return value
    return value.contiguous().view(-1, *value.shape[dim:]).sum(0)


class MultiViewTensor(dict):
    """
    A container for tensors with different shapes, keyed by shape.
    """

    def __init__(self, value=None):
        if value is not None:
            if isinstance(value, torch.Tensor):
                self[value.shape] = value

    def add(self, term):
        if isinstance(term, torch.Tensor):
            if term.shape in self:
                self[term.shape] = self[term.shape] + term
            else:
                self[term.shape] = term
        else:
            for shape, value in term.items():
                if shape in self:
                    self[shape] = self[shape] + value
                else:
                    self[shape] = value

    def sum_leftmost_all_but(self, dim):
        assert dim >= 0
        result = MultiViewTensor()
        for shape, term in self.items():
            if dim == 0:
                result.add(term.sum())
            elif dim > term.dim():
                result.add(term)
            else:
                result.add(sum_leftmost(term, -dim))
        return result

    def contract_to(self, target):
        """Opposite of broadcast."""
        result = 0
        for tensor in self.values():
            result += reduce_to_target(tensor, target)
        return result


class Guide(nn.Module):
    def __init__(self):
        super(Guide, self).__init__()
        self.loc = nn.Parameter(torch.zeros(4, 3))
        self.log_scale = nn.Parameter(torch.zeros(4, 3))

    def log_prob(self, z):
        scale = self.log_scale.exp()
        return -0.5 * ((z - self.loc) / scale) ** 2 - self.log_scale


def main():
    guide = Guide()
    z = (guide.loc + guide.log_scale.exp() * torch.randn(4, 3)).detach()
    # costs from model sites living in different (broadcastable) plates
    downstream_cost = MultiViewTensor()
    downstream_cost.add(torch.randn(4, 3) * guide.loc.sum())
    downstream_cost.add(torch.randn(4, 1) * guide.log_scale.mean())
    downstream_cost.add(torch.randn(1, 3) * guide.loc.mean())
    log_q = guide.log_prob(z)
    cost = downstream_cost.contract_to(log_q)
    surrogate_elbo = (log_q * cost.detach()).sum() + cost.sum()
    (-surrogate_elbo).backward()
    return surrogate_elbo.detach(), guide.loc.grad.clone(), guide.log_scale.grad.clone()


elbo, grad_loc, grad_log_scale = main()
