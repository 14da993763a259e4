# label: safe
# why: Trace.log_prob_sum accumulates `result += log_p` from `result = 0.0`; the first `+=` on a Python float builds a new tensor (0.0 + log_p) instead of aliasing the memoised `site["log_prob_sum"]`, so later in-place additions touch only that private sum and the HMC potential-energy gradient is correct (the commit's `result = result + log_p` was for the JIT path).
# source: https://github.com/pyro-ppl/pyro/commit/4e4261398aa627df8aa25ef7914677125d5a1f07
from collections import OrderedDict

import torch
import torch.distributions as dist

torch.manual_seed(0)


def scale_and_mask(tensor, scale=1.0, mask=None):
    if mask is None:
        return tensor * scale
    return tensor * scale * mask


class Trace(object):
    def __init__(self, graph_type="flat"):
        self.graph_type = graph_type
        self.nodes = OrderedDict()

    def add_node(self, site_name, **kwargs):
        self.nodes[site_name] = kwargs

    def log_prob_sum(self, site_filter=lambda name, site: True):
        """
        Compute the site-wise log probabilities of the trace.
        The computation of ``log_prob_sum`` is memoized.
        """
        result = 0.0
        for name, site in self.nodes.items():
            if site["type"] == "sample" and site_filter(name, site):
                if "log_prob_sum" in site:
                    log_p = site["log_prob_sum"]
                else:
                    log_p = site["fn"].log_prob(site["value"], *site["args"], **site["kwargs"])
                    log_p = scale_and_mask(log_p, site["scale"], site["mask"]).sum()
                    site["log_prob_sum"] = log_p
                result += log_p
        return result


def model_trace(z):
    """A toy hierarchical model traced at latent values z = {'mu': ..., 'log_sigma': ...}."""
    trace = Trace()
    data = torch.tensor([0.3, -1.2, 0.8, 2.1, 0.5])
    trace.add_node("mu", type="sample", fn=dist.Normal(0.0, 2.0), value=z["mu"],
                   args=(), kwargs={}, scale=1.0, mask=None)
    trace.add_node("log_sigma", type="sample", fn=dist.Normal(0.0, 1.0), value=z["log_sigma"],
                   args=(), kwargs={}, scale=1.0, mask=None)
    trace.add_node("obs", type="sample", fn=dist.Normal(z["mu"], z["log_sigma"].exp()), value=data,
                   args=(), kwargs={}, scale=1.0, mask=torch.tensor([1.0, 1.0, 1.0, 1.0, 0.0]))
    return trace


def potential_energy(z):
    trace = model_trace(z)
    energy = -trace.log_prob_sum()
    # memoised second pass (as HMC does when it re-reads the prototype trace)
    energy_again = -trace.log_prob_sum()
    site_sums = torch.stack([site["log_prob_sum"] for site in trace.nodes.values()])
    return energy, energy_again, site_sums


def main():
    z = {"mu": torch.tensor(0.5, requires_grad=True), "log_sigma": torch.tensor(-0.2, requires_grad=True)}
    energy, energy_again, site_sums = potential_energy(z)
    grads = torch.autograd.grad(energy, [z["mu"], z["log_sigma"]])
    return energy.detach(), energy_again.detach(), site_sums.detach(), torch.stack(grads)


energy, energy_again, site_sums, grads = main()
