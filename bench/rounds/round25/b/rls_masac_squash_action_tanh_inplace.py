# label: safe
# why: squash_action() does pi.tanh_() on the rsample() output after dist.log_prob(pi) was taken, but neither the reparameterized add nor the Normal log_prob saved pi for backward, and tanh_ saves its own result, so the in-place squash is harmless.
# source: https://github.com/StepNeverStop/RLs/commit/99184f0542dff51dfdbfce420b12540496575b47 (pre-commit squash_action in rls/utils/torch_utils.py, used by rls/algorithms/multi/masac.py)
import torch as th
import torch.distributions as td
import torch.nn as nn

th.manual_seed(0)


def clip_but_pass_gradient(x, l=-1., h=1.):
    clip_up = th.as_tensor(x > h)
    clip_low = th.as_tensor(x < l)
    return x + ((h - x) * clip_up + (l - x) * clip_low).detach()


def squash_action(pi, log_pi, *, is_independent=True):
    """squash action to range [-1, 1] and calculate the correct log probability value."""
    pi.tanh_()
    sub = (clip_but_pass_gradient(1 - pi ** 2, l=0, h=1) + th.finfo().eps).log()
    log_pi = log_pi - sub
    if is_independent:
        log_pi = log_pi.sum(-1, keepdim=True)
    return pi, log_pi


class ActorMuLogstd(nn.Module):
    def __init__(self, obs_dim, a_dim):
        super().__init__()
        self.share = nn.Sequential(nn.Linear(obs_dim, 16), nn.ReLU())
        self.mu = nn.Linear(16, a_dim)
        self.log_std = nn.Linear(16, a_dim)

    def forward(self, obs):
        x = self.share(obs)
        return self.mu(x), self.log_std(x).clamp(-20, 2)


class Critic(nn.Module):
    def __init__(self, obs_dim, a_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + a_dim, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, obs, a):
        return self.net(th.cat([obs, a], -1))


def main():
    actor, critic = ActorMuLogstd(5, 2), Critic(5, 2)
    obs = th.randn(4, 8, 5)  # [T, B, *]
    action = th.rand(4, 8, 2) * 1.8 - 0.9
    alpha = 0.2
    mu, log_std = actor(obs)
    dist = td.Independent(td.Normal(mu, log_std.exp()), 1)
    pi = dist.rsample()  # [T, B, A]
    pi, log_pi = squash_action(pi, dist.log_prob(pi).unsqueeze(-1))  # [T, B, A], [T, B, 1]
    pi_action = action.arctanh()
    _, log_pi_action = squash_action(pi_action, dist.log_prob(pi_action).unsqueeze(-1))
    q_s_pi = critic(obs, pi)
    actor_loss = -(q_s_pi - alpha * log_pi).mean() + 0.01 * (-log_pi_action).mean()
    actor_loss.backward()
    return actor_loss.detach(), actor.mu.weight.grad, actor.log_std.weight.grad


actor_loss, mu_weight_grad, log_std_weight_grad = main()
