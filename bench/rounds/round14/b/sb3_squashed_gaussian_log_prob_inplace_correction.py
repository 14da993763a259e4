# label: safe
# why: the tanh-squash correction is subtracted in place from the summed Gaussian log-prob, a fresh tensor that sum() does not save, so SAC's actor loss and gradients are unchanged
# source: https://github.com/DLR-RM/stable-baselines3/blob/e05d2dbe6eda0acd0ef2e316e3e4065677add3eb/stable_baselines3/common/distributions.py
import torch as th
import torch.nn as nn
from torch.distributions import Normal

th.manual_seed(0)


def sum_independent_dims(tensor):
    if len(tensor.shape) > 1:
        tensor = tensor.sum(dim=1)
    else:
        tensor = tensor.sum()
    return tensor


class DiagGaussianDistribution:
    def __init__(self, action_dim):
        self.action_dim = action_dim
        self.distribution = None

    def proba_distribution(self, mean_actions, log_std):
        action_std = th.ones_like(mean_actions) * log_std.exp()
        self.distribution = Normal(mean_actions, action_std)
        return self

    def log_prob(self, actions):
        log_prob = self.distribution.log_prob(actions)
        return sum_independent_dims(log_prob)


class SquashedDiagGaussianDistribution(DiagGaussianDistribution):
    def __init__(self, action_dim, epsilon=1e-6):
        super().__init__(action_dim)
        self.epsilon = epsilon
        self.gaussian_actions = None

    def log_prob(self, actions, gaussian_actions=None):
        if gaussian_actions is None:
            gaussian_actions = th.atanh(actions.clamp(-1 + 1e-6, 1 - 1e-6))
        # Log likelihood for a Gaussian distribution
        log_prob = super().log_prob(gaussian_actions)
        # Squash correction (from original SAC implementation)
        log_prob -= th.sum(th.log(1 - actions**2 + self.epsilon), dim=1)
        return log_prob

    def log_prob_from_params(self, mean_actions, log_std):
        self.proba_distribution(mean_actions, log_std)
        self.gaussian_actions = self.distribution.rsample()
        actions = th.tanh(self.gaussian_actions)
        log_prob = self.log_prob(actions, self.gaussian_actions)
        return actions, log_prob


class Actor(nn.Module):
    def __init__(self, obs_dim=4, action_dim=2):
        super().__init__()
        self.latent_pi = nn.Sequential(nn.Linear(obs_dim, 16), nn.ReLU())
        self.mu = nn.Linear(16, action_dim)
        self.log_std = nn.Linear(16, action_dim)
        self.action_dist = SquashedDiagGaussianDistribution(action_dim)

    def action_log_prob(self, obs):
        latent_pi = self.latent_pi(obs)
        mean_actions = self.mu(latent_pi)
        log_std = th.clamp(self.log_std(latent_pi), -20, 2)
        return self.action_dist.log_prob_from_params(mean_actions, log_std)


actor = Actor()
critic = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
obs = th.randn(5, 4)
actions_pi, log_prob = actor.action_log_prob(obs)
log_prob = log_prob.reshape(-1, 1)
ent_coef = 0.1
min_qf_pi = critic(th.cat([obs, actions_pi], dim=1))
actor_loss = (ent_coef * log_prob - min_qf_pi).mean()
actor_loss.backward()
