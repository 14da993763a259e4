# label: safe
# why: the fixed cond_squeeze returns squeeze() views instead of squeezing in place, so the tanh outputs saved by TanhBackward keep their version and the REINFORCE gradient is computed normally.
# source: https://github.com/kengz/SLM-Lab/commit/52027853e0f0cac29ba48943442bd912bdbd010e (slm_lab/agent/algorithm/policy_util.py after the fix)
import torch
import torch.nn as nn
from torch import distributions

torch.manual_seed(0)


def build_sequential(dims, activation):
    layers = []
    for in_d, out_d in zip(dims[:-1], dims[1:]):
        layers.append(nn.Linear(in_d, out_d))
        layers.append(nn.Tanh() if activation == 'tanh' else nn.ReLU())
    return nn.Sequential(*layers)


class MLPNet(nn.Module):
    def __init__(self, in_dim, hid_layers, out_dim):
        super().__init__()
        self.model = build_sequential([in_dim] + hid_layers, 'relu')
        tail_in_dim = hid_layers[-1]
        self.model_tails = nn.ModuleList([build_sequential([tail_in_dim, out_d], 'tanh') for out_d in out_dim])

    def forward(self, x):
        x = self.model(x)
        return [model_tail(x) for model_tail in self.model_tails]


def cond_squeeze(out):
    '''Helper to squeeze output depending if it is tensor (discrete pdparam) or list of tensors (continuous pdparam of loc and scale)'''
    if isinstance(out, list):
        return [out_t.squeeze(dim=0) for out_t in out]
    else:
        return out.squeeze(dim=0)


def sample_action_pd(ActionPD, pdparam, is_discrete):
    pdparam = cond_squeeze(pdparam)
    if is_discrete:
        action_pd = ActionPD(logits=pdparam)
    else:  # continuous outputs a list, loc and scale
        assert len(pdparam) == 2, pdparam
        # scale (stdev) must be >0, use softplus
        if pdparam[1] < 5:
            pdparam[1] = torch.log(1 + torch.exp(pdparam[1])) + 1e-8
        action_pd = ActionPD(*pdparam)
    action = action_pd.sample()
    return action, action_pd


class Reinforce:
    def __init__(self, net, gamma=0.99):
        self.net = net
        self.gamma = gamma
        self.optim = torch.optim.Adam(self.net.parameters(), lr=0.01)

    def calc_pdparam(self, state):
        return self.net(state)

    def act(self, state):
        pdparam = self.calc_pdparam(state.unsqueeze(dim=0))
        action, action_pd = sample_action_pd(distributions.Normal, pdparam, is_discrete=False)
        return action, action_pd.log_prob(action)

    def train(self, log_probs, rewards):
        rets = []
        future_ret = 0.0
        for r in reversed(rewards):
            future_ret = r + self.gamma * future_ret
            rets.insert(0, future_ret)
        rets = torch.tensor(rets)
        loss = -(torch.stack(log_probs).view(-1) * rets).mean()
        self.optim.zero_grad()
        loss.backward()
        self.optim.step()
        return loss.detach()


def main():
    agent = Reinforce(MLPNet(4, [16], [1, 1]))
    states = torch.randn(5, 4)
    log_probs, rewards = [], []
    for t in range(5):
        action, log_prob = agent.act(states[t])
        log_probs.append(log_prob)
        rewards.append(float(-action.abs().sum()))
    loss = agent.train(log_probs, rewards)
    return loss, agent.net.model[0].weight.detach().clone()


loss, first_weight = main()
