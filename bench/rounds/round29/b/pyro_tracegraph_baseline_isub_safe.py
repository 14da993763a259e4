# label: safe
# why: in _compute_elbo_non_reparam `downstream_cost -= baseline` overwrites a freshly summed cost that no backward formula saved, and the cost is only read afterwards through .detach(), so the surrogate ELBO and baseline gradients are unchanged.
# source: https://github.com/pyro-ppl/pyro/commit/9bc0740457a395282cdcdc6271755d4a2d5e8e3b
import torch
import torch.nn as nn

torch.manual_seed(0)


class BaselineNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 1)

    def forward(self, x):
        return self.linear(x).squeeze(-1)


def _construct_baseline(node, guide_site, downstream_cost):
    baseline_value = guide_site["baseline"].get("baseline_value")
    nn_baseline = guide_site["baseline"].get("nn_baseline")
    nn_baseline_input = guide_site["baseline"].get("nn_baseline_input")
    use_nn_baseline = nn_baseline is not None
    use_baseline_value = baseline_value is not None
    use_baseline = use_nn_baseline or use_baseline_value

    baseline_loss = 0.0
    baseline = 0.0
    if use_nn_baseline:
        # block nn_baseline_input gradients except in baseline loss
        baseline += nn_baseline(nn_baseline_input.detach())
    elif use_baseline_value:
        baseline += baseline_value
    if use_nn_baseline or use_baseline_value:
        baseline_loss += torch.pow(downstream_cost.detach() - baseline, 2.0).sum()
    return use_baseline, baseline_loss, baseline


def _compute_downstream_costs(model_trace, guide_trace, non_reparam_nodes):
    downstream_costs = {}
    for node in non_reparam_nodes:
        downstream_costs[node] = (model_trace[node]["log_prob"] - guide_trace[node]["log_prob"]
                                  + model_trace["obs"]["log_prob"])
    return downstream_costs


def _compute_elbo_non_reparam(guide_trace, non_reparam_nodes, downstream_costs):
    surrogate_elbo = 0.0
    baseline_loss = 0.0
    for node in non_reparam_nodes:
        guide_site = guide_trace[node]
        downstream_cost = downstream_costs[node]
        score_function = guide_site["score_function"]

        use_baseline, baseline_loss_term, baseline = _construct_baseline(node, guide_site, downstream_cost)

        if use_baseline:
            downstream_cost -= baseline
            baseline_loss += baseline_loss_term

        surrogate_elbo += (score_function * downstream_cost.detach()).sum()

    return surrogate_elbo, baseline_loss


def main():
    probs_param = torch.tensor([0.2, 0.6, 0.7], requires_grad=True)
    model_loc = torch.tensor(0.3, requires_grad=True)
    baseline_net = BaselineNet()
    data = torch.tensor([1.0, 0.0, 1.0])

    q = torch.distributions.Bernoulli(probs=probs_param)
    z = q.sample()
    guide_log_prob = q.log_prob(z)
    p = torch.distributions.Bernoulli(logits=model_loc.expand(3))
    model_log_prob = p.log_prob(z)
    obs_log_prob = torch.distributions.Normal(z, 1.0).log_prob(data)

    model_trace = {"z": {"log_prob": model_log_prob}, "obs": {"log_prob": obs_log_prob}}
    guide_trace = {"z": {"log_prob": guide_log_prob, "score_function": guide_log_prob,
                         "baseline": {"nn_baseline": baseline_net, "nn_baseline_input": data}}}

    downstream_costs = _compute_downstream_costs(model_trace, guide_trace, ["z"])
    surrogate_elbo, baseline_loss = _compute_elbo_non_reparam(guide_trace, ["z"], downstream_costs)
    elbo = (model_log_prob + obs_log_prob - guide_log_prob).sum()
    loss = -(surrogate_elbo + elbo) + baseline_loss
    loss.backward()
    return loss.detach(), probs_param.grad, model_loc.grad, baseline_net.linear.weight.grad


loss, probs_grad, loc_grad, baseline_grad = main()
