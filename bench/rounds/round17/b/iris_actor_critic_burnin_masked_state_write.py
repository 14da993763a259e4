# label: safe
# why: the LSTM state is written in place through a padding mask only during burn-in under torch.no_grad(), and the lambda-returns buffer is filled in place under no_grad; the grad-enabled imagination loop only rebinds hx/cx.
# source: https://github.com/eloialonso/iris/blob/0d82cafa178bcdc58203e817c82660b9c18c570e/src/models/actor_critic.py
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions.categorical import Categorical

torch.manual_seed(0)


@dataclass
class ActorCriticOutput:
    logits_actions: torch.Tensor
    means_values: torch.Tensor


def compute_lambda_returns(rewards, values, ends, gamma, lambda_):
    t = rewards.size(1)
    lambda_returns = torch.empty_like(values)
    lambda_returns[:, -1] = values[:, -1]
    lambda_returns[:, :-1] = rewards[:, :-1] + ends[:, :-1].logical_not() * gamma * (1 - lambda_) * values[:, 1:]
    last = values[:, -1]
    for i in list(range(t - 1))[::-1]:
        lambda_returns[:, i] += ends[:, i].logical_not() * gamma * lambda_ * last
        last = lambda_returns[:, i]
    return lambda_returns


class WorldModelEnv:
    def __init__(self, dynamics):
        self.dynamics = dynamics
        self.obs = None

    def reset_from_initial_observations(self, obs):
        self.obs = obs
        return obs

    @torch.no_grad()
    def step(self, action):
        self.obs = torch.sigmoid(self.dynamics(self.obs) + action.float())
        reward = self.obs.mean(dim=1)
        done = reward > 0.9
        return self.obs, reward, done


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, act_vocab_size):
        super().__init__()
        self.encoder = nn.Linear(obs_dim, 16)
        self.lstm_dim = 8
        self.lstm = nn.LSTMCell(16, self.lstm_dim)
        self.hx, self.cx = None, None
        self.critic_linear = nn.Linear(self.lstm_dim, 1)
        self.actor_linear = nn.Linear(self.lstm_dim, act_vocab_size)

    def clear(self):
        self.hx, self.cx = None, None

    def reset(self, n, burnin_observations=None, mask_padding=None):
        self.hx = torch.zeros(n, self.lstm_dim)
        self.cx = torch.zeros(n, self.lstm_dim)
        if burnin_observations is not None:
            for i in range(burnin_observations.size(1)):
                if mask_padding[:, i].any():
                    with torch.no_grad():
                        self(burnin_observations[:, i], mask_padding[:, i])

    def forward(self, inputs, mask_padding=None):
        x = inputs[mask_padding] if mask_padding is not None else inputs
        x = F.relu(self.encoder(x.mul(2).sub(1)))
        if mask_padding is None:
            self.hx, self.cx = self.lstm(x, (self.hx, self.cx))
        else:
            self.hx[mask_padding], self.cx[mask_padding] = self.lstm(x, (self.hx[mask_padding], self.cx[mask_padding]))
        logits_actions = self.actor_linear(self.hx).unsqueeze(1)
        means_values = self.critic_linear(self.hx).unsqueeze(1)
        return ActorCriticOutput(logits_actions, means_values)

    def imagine(self, batch, wm_env, horizon):
        initial_observations = batch["observations"]
        mask_padding = batch["mask_padding"]
        self.reset(n=initial_observations.size(0), burnin_observations=initial_observations[:, :-1], mask_padding=mask_padding[:, :-1])
        obs = wm_env.reset_from_initial_observations(initial_observations[:, -1])
        all_actions, all_logits, all_values, all_rewards, all_ends = [], [], [], [], []
        for k in range(horizon):
            outputs_ac = self(obs)
            action_token = Categorical(logits=outputs_ac.logits_actions).sample()
            obs, reward, done = wm_env.step(action_token)
            all_actions.append(action_token)
            all_logits.append(outputs_ac.logits_actions)
            all_values.append(outputs_ac.means_values)
            all_rewards.append(reward.reshape(-1, 1))
            all_ends.append(done.reshape(-1, 1))
        self.clear()
        return {
            "actions": torch.cat(all_actions, dim=1),
            "logits_actions": torch.cat(all_logits, dim=1),
            "values": torch.cat(all_values, dim=1).squeeze(-1),
            "rewards": torch.cat(all_rewards, dim=1),
            "ends": torch.cat(all_ends, dim=1),
        }

    def compute_loss(self, batch, wm_env, horizon, gamma, lambda_, entropy_weight):
        outputs = self.imagine(batch, wm_env, horizon)
        with torch.no_grad():
            lambda_returns = compute_lambda_returns(outputs["rewards"], outputs["values"], outputs["ends"], gamma, lambda_)[:, :-1]
        values = outputs["values"][:, :-1]
        d = Categorical(logits=outputs["logits_actions"][:, :-1])
        log_probs = d.log_prob(outputs["actions"][:, :-1])
        loss_actions = -1 * (log_probs * (lambda_returns - values.detach())).mean()
        loss_entropy = -entropy_weight * d.entropy().mean()
        loss_values = F.mse_loss(values, lambda_returns)
        return loss_actions + loss_entropy + loss_values


obs_dim = 6
actor_critic = ActorCritic(obs_dim, act_vocab_size=3)
wm_env = WorldModelEnv(nn.Linear(obs_dim, obs_dim))
mask = torch.ones(4, 3, dtype=torch.bool)
mask[0, 0] = False
mask[2, :2] = False
batch = {"observations": torch.rand(4, 3, obs_dim), "mask_padding": mask}
loss = actor_critic.compute_loss(batch, wm_env, horizon=5, gamma=0.99, lambda_=0.95, entropy_weight=0.001)
loss.backward()
