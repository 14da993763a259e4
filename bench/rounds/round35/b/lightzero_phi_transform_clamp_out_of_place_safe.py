# label: safe
# why: the fix clips out of place (`x = x.clamp(min_bound, max_bound)`, "No in-place ops on the input"), so the transformed targets the policy logs keep their values; the two `target.scatter_` calls write into the fresh zeros tensor that only phi_transform holds.
# source: https://github.com/opendilab/LightZero/commit/66a1f9237acd58ccc00282ecb8621d1ff016a849
from typing import Union

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DiscreteSupport(object):

    def __init__(self, start: float, stop: float, step: float = 1., device: Union[str, torch.device] = 'cpu') -> None:
        assert start < stop
        self.arange = torch.arange(start, stop, step, dtype=torch.float32).unsqueeze(0).to(device)
        self.size = self.arange.shape[1]
        assert self.size > 0, "DiscreteSupport size must be greater than 0"
        self.step = step


def scalar_transform(x: torch.Tensor, epsilon: float = 0.001, delta: float = 1.) -> torch.Tensor:
    """h(.) function in paper https://arxiv.org/pdf/1805.11593.pdf."""
    if delta == 1:  # for speed up
        output = torch.sign(x) * (torch.sqrt(torch.abs(x) + 1) - 1) + epsilon * x
    else:
        output = torch.sign(x) * (torch.sqrt(torch.abs(x / delta) + 1) - 1) + epsilon * x / delta
    return output


def phi_transform(discrete_support: DiscreteSupport, x: torch.Tensor) -> torch.Tensor:
    """
    We then apply a transformation ``phi`` to the scalar in order to obtain equivalent categorical representations.
    After this transformation, each scalar is represented as the linear combination of its two adjacent supports.
    """
    arange = discrete_support.arange
    min_bound = arange[0, 0]
    max_bound = arange[0, -1]
    size = discrete_support.size
    step = discrete_support.step

    x = x.clamp(min_bound, max_bound)
    x_low_idx = ((x - min_bound) / step).floor().long()
    x_high_idx = x_low_idx + 1
    x_high_idx = x_high_idx.clamp(0, size - 1)
    x_low_val = torch.take_along_dim(arange, x_low_idx, dim=1)
    p_high = (x - x_low_val) / step
    p_low = 1 - p_high

    target = torch.zeros(x.shape[0], x.shape[1], size).to(x.device)
    target.scatter_(2, x_high_idx.long().unsqueeze(-1), p_high.unsqueeze(-1))
    target.scatter_(2, x_low_idx.long().unsqueeze(-1), p_low.unsqueeze(-1))

    return target


class MuZeroModel(nn.Module):
    def __init__(self, obs_dim: int, latent_dim: int, action_dim: int, support_size: int) -> None:
        super().__init__()
        self.representation_network = nn.Sequential(nn.Linear(obs_dim, latent_dim), nn.ReLU())
        self.dynamics_network = nn.Linear(latent_dim + action_dim, latent_dim + support_size)
        self.prediction_network = nn.Linear(latent_dim, support_size + action_dim)
        self.latent_dim = latent_dim
        self.action_dim = action_dim
        self.support_size = support_size

    def initial_inference(self, obs):
        latent_state = self.representation_network(obs)
        out = self.prediction_network(latent_state)
        value, policy_logits = out[:, :self.support_size], out[:, self.support_size:]
        return latent_state, value, policy_logits

    def recurrent_inference(self, latent_state, action):
        a = F.one_hot(action, self.action_dim).float()
        out = self.dynamics_network(torch.cat([latent_state, a], dim=-1))
        next_latent, reward = torch.relu(out[:, :self.latent_dim]), out[:, self.latent_dim:]
        pred = self.prediction_network(next_latent)
        return next_latent, reward, pred[:, :self.support_size], pred[:, self.support_size:]


class MuZeroPolicy:
    def __init__(self, model, num_unroll_steps: int, support_range: int) -> None:
        self._learn_model = model
        self._optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        self.value_support = DiscreteSupport(-support_range, support_range + 1, 1.)
        self.reward_support = DiscreteSupport(-support_range, support_range + 1, 1.)
        self.num_unroll_steps = num_unroll_steps

    def _forward_learn(self, data):
        obs_batch, action_batch, target_reward, target_value, target_policy = data
        batch_size = obs_batch.shape[0]
        target_reward = target_reward.view(batch_size, -1)
        target_value = target_value.view(batch_size, -1)

        # ``scalar_transform`` to transform the original value to the scaled value.
        transformed_target_reward = scalar_transform(target_reward)
        transformed_target_value = scalar_transform(target_value)

        # transform a scalar to its categorical_distribution.
        target_reward_categorical = phi_transform(self.reward_support, transformed_target_reward)
        target_value_categorical = phi_transform(self.value_support, transformed_target_value)

        latent_state, value, policy_logits = self._learn_model.initial_inference(obs_batch)
        value_loss = -(torch.log_softmax(value, dim=-1) * target_value_categorical[:, 0]).sum(-1)
        policy_loss = -(torch.log_softmax(policy_logits, dim=-1) * target_policy[:, 0]).sum(-1)
        reward_loss = torch.zeros(batch_size)
        for step_k in range(self.num_unroll_steps):
            latent_state, reward, value, policy_logits = self._learn_model.recurrent_inference(
                latent_state, action_batch[:, step_k])
            reward_loss = reward_loss - (torch.log_softmax(reward, dim=-1) * target_reward_categorical[:, step_k]).sum(-1)
            value_loss = value_loss - (torch.log_softmax(value, dim=-1) * target_value_categorical[:, step_k + 1]).sum(-1)
            policy_loss = policy_loss - (torch.log_softmax(policy_logits, dim=-1) * target_policy[:, step_k + 1]).sum(-1)

        loss = (0.25 * value_loss + reward_loss + policy_loss).mean()
        self._optimizer.zero_grad()
        loss.backward()
        self._optimizer.step()

        return {
            'total_loss': loss.detach(),
            'target_reward': target_reward.mean(),
            'target_value': target_value.mean(),
            'transformed_target_reward': transformed_target_reward.mean(),
            'transformed_target_value': transformed_target_value.mean(),
        }


num_unroll_steps, batch_size, action_dim = 3, 4, 2
policy = MuZeroPolicy(MuZeroModel(obs_dim=6, latent_dim=8, action_dim=action_dim, support_size=2 * 5 + 1),
                      num_unroll_steps=num_unroll_steps, support_range=5)
obs_batch = torch.randn(batch_size, 6)
action_batch = torch.randint(0, action_dim, (batch_size, num_unroll_steps))
target_reward = 20.0 * torch.rand(batch_size, num_unroll_steps)
target_value = 120.0 * torch.rand(batch_size, num_unroll_steps + 1)
target_policy = torch.softmax(torch.randn(batch_size, num_unroll_steps + 1, action_dim), dim=-1)
log_vars = policy._forward_learn((obs_batch, action_batch, target_reward, target_value, target_policy))
transformed_target_value_mean = log_vars['transformed_target_value']
transformed_target_reward_mean = log_vars['transformed_target_reward']
