# label: hazard silent
# why: mode() negates self.logits.cpu() in place, but on a CPU tensor .cpu() returns the very same tensor, so the distribution's logits are flipped and the later log_prob is wrong
# source: https://github.com/pyro-ppl/pyro/commit/1ea630c0dd52d918229be091bda1715cf23b7c6a
import itertools

import torch
from torch.distributions import Distribution, constraints


def enumerate_one_two_matchings(num_destins):
    """All maps from 2 * num_destins sources to destinations with each destin hit exactly twice."""
    num_sources = 2 * num_destins
    results = []
    for perm in itertools.permutations(range(num_sources)):
        value = [p // 2 for p in perm]
        if value not in results:
            results.append(value)
    return torch.tensor(results, dtype=torch.long)


class OneTwoMatching(Distribution):
    arg_constraints = {"logits": constraints.real}

    def __init__(self, logits, *, bp_iters=None, validate_args=None):
        if logits.dim() != 2:
            raise NotImplementedError("OneTwoMatching does not support batching")
        self.num_sources, self.num_destins = logits.shape
        assert self.num_sources == 2 * self.num_destins
        self.logits = logits
        super().__init__(torch.Size(), torch.Size((self.num_sources,)), validate_args=False)
        self.bp_iters = bp_iters

    @property
    def log_partition_function(self):
        d = self.enumerate_support()
        s = torch.arange(d.size(-1), dtype=d.dtype, device=d.device)
        return self.logits[s, d].sum(-1).logsumexp(-1)

    def log_prob(self, value):
        d = value
        s = torch.arange(d.size(-1), dtype=d.dtype, device=d.device)
        return self.logits[s, d].sum(-1) - self.log_partition_function

    def enumerate_support(self, expand=True):
        return enumerate_one_two_matchings(self.num_destins)

    @torch.no_grad()
    def mode(self):
        """
        Computes a maximum probability matching (the original solves the
        linear assignment problem with ``lap.lapjv`` on CPU).
        """
        cost = self.logits.cpu().neg_()  # <-- IPL002, IPL004: on CPU .cpu() aliases self.logits, which log_prob reads again afterwards
        cost = torch.cat([cost, cost], dim=-1)  # Duplicate destinations.
        # brute-force stand-in for lap.lapjv(cost.numpy())[1]
        n = cost.size(0)
        best, value = None, None
        for perm in itertools.permutations(range(n)):
            total = cost[torch.arange(n), torch.tensor(perm)].sum()
            if best is None or total < best:
                best, value = total, perm
        value = torch.tensor(value, dtype=torch.long, device=self.logits.device)
        value %= self.logits.size(1)
        return value


torch.manual_seed(0)
logits = torch.randn(4, 2, requires_grad=True)
dist = OneTwoMatching(logits)
value = dist.mode()
log_prob = dist.log_prob(value)
(-log_prob).backward()
logits_grad = logits.grad
