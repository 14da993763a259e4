# label: hazard silent
# why: RelaxedOneHotCategorical.rsample ends in exp(), which saves its output for backward; overwriting that output with the hard one-hot through .data.copy_ bypasses the version check, so the policy gradient is computed from the one-hot instead of the relaxed sample
# source: https://github.com/pytorch/rl/pull/1488 (pre-refactor code in commit e133749a72d319688786851f75ee8fc2fb64871e, torchrl/modules/distributions/discrete.py)
import torch
import torch.distributions as D
import torch.nn as nn

torch.manual_seed(0)


class OneHotCategorical(D.Categorical):
    def __init__(self, logits=None, probs=None, **kwargs):
        self._param = logits if probs is None else probs
        super().__init__(probs=probs, logits=logits, **kwargs)

    def sample(self, sample_shape=None):
        if sample_shape is None:
            sample_shape = torch.Size([])
        out = super().sample(sample_shape=sample_shape)
        return torch.nn.functional.one_hot(out, self.logits.shape[-1]).to(torch.long)

    def log_prob(self, value):
        return super().log_prob(value.argmax(dim=-1))

    def rsample(self, sample_shape=None):
        if sample_shape is None:
            sample_shape = torch.Size([])
        d = D.relaxed_categorical.RelaxedOneHotCategorical(1.0, logits=self.logits)
        out = d.rsample(sample_shape)
        out.data.copy_((out == out.max(-1)[0].unsqueeze(-1)).to(out.dtype))  # <-- IPL007: overwrites exp()'s saved output through .data
        return out


class Actor(nn.Module):
    def __init__(self, obs_dim=4, n_actions=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 8), nn.ELU(), nn.Linear(8, n_actions))

    def forward(self, obs):
        return OneHotCategorical(logits=self.net(obs))


actor = Actor()
critic_q = nn.Linear(4 + 3, 1)
for p in critic_q.parameters():
    p.requires_grad_(False)
obs = torch.randn(6, 4)
dist = actor(obs)
action = dist.rsample()
q_value = critic_q(torch.cat([obs, action], dim=-1))
actor_loss = -q_value.mean()
actor_loss.backward()
