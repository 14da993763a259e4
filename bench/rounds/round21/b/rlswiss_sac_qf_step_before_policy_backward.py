# label: hazard raises no-twin
# why: train_step builds policy_loss through qf1(obs, new_actions), then steps qf1_optimizer/qf2_optimizer before policy_loss.backward(); Adam rewrites the Q-network weights that those forwards saved, so the policy backward raises (PyTorch >= 1.5).
# source: https://github.com/KamyarGh/rl_swiss/issues/3
from collections import OrderedDict

import torch
from torch import nn as nn
import torch.optim as optim
from torch.distributions import Normal

torch.manual_seed(0)


class FlattenMlp(nn.Module):
    def __init__(self, input_size, output_size, hidden_size=32):
        super().__init__()
        self.fc0 = nn.Linear(input_size, hidden_size)
        self.fc1 = nn.Linear(hidden_size, hidden_size)
        self.last_fc = nn.Linear(hidden_size, output_size)

    def forward(self, *inputs):
        h = torch.cat(inputs, dim=1)
        h = torch.relu(self.fc0(h))
        h = torch.relu(self.fc1(h))
        return self.last_fc(h)

    def copy(self):
        new = FlattenMlp(self.fc0.in_features, self.last_fc.out_features, self.fc0.out_features)
        new.load_state_dict(self.state_dict())
        return new


class ReparamTanhMultivariateGaussianPolicy(nn.Module):
    def __init__(self, obs_dim, action_dim, hidden_size=32):
        super().__init__()
        self.fc0 = nn.Linear(obs_dim, hidden_size)
        self.last_fc = nn.Linear(hidden_size, action_dim)
        self.last_fc_log_std = nn.Linear(hidden_size, action_dim)

    def forward(self, obs, return_log_prob=False):
        h = torch.relu(self.fc0(obs))
        mean = self.last_fc(h)
        log_std = torch.clamp(self.last_fc_log_std(h), -20, 2)
        normal = Normal(mean, log_std.exp())
        pre_tanh = normal.rsample()
        action = torch.tanh(pre_tanh)
        log_prob = normal.log_prob(pre_tanh) - torch.log(1 - action.pow(2) + 1e-6)
        log_prob = log_prob.sum(dim=1, keepdim=True)
        return action, mean, log_std, log_prob


class SoftActorCritic:
    def __init__(self, policy, qf1, qf2, vf, reward_scale=1.0, discount=0.99, policy_lr=1e-3,
                 qf_lr=1e-3, vf_lr=1e-3, policy_mean_reg_weight=1e-3, policy_std_reg_weight=1e-3,
                 optimizer_class=optim.Adam, beta_1=0.9):
        self.policy, self.qf1, self.qf2, self.vf = policy, qf1, qf2, vf
        self.reward_scale = reward_scale
        self.discount = discount
        self.policy_mean_reg_weight = policy_mean_reg_weight
        self.policy_std_reg_weight = policy_std_reg_weight
        self.target_vf = vf.copy()
        self.eval_statistics = None
        self.policy_optimizer = optimizer_class(self.policy.parameters(), lr=policy_lr, betas=(beta_1, 0.999))
        self.qf1_optimizer = optimizer_class(self.qf1.parameters(), lr=qf_lr, betas=(beta_1, 0.999))
        self.qf2_optimizer = optimizer_class(self.qf2.parameters(), lr=qf_lr, betas=(beta_1, 0.999))
        self.vf_optimizer = optimizer_class(self.vf.parameters(), lr=vf_lr, betas=(beta_1, 0.999))

    def train_step(self, batch):
        rewards = self.reward_scale * batch['rewards']
        terminals = batch['terminals']
        obs = batch['observations']
        actions = batch['actions']
        next_obs = batch['next_observations']

        q1_pred = self.qf1(obs, actions)
        q2_pred = self.qf2(obs, actions)
        v_pred = self.vf(obs)
        policy_outputs = self.policy(obs, return_log_prob=True)
        new_actions, policy_mean, policy_log_std, log_pi = policy_outputs[:4]

        # QF Loss
        target_v_values = self.target_vf(next_obs)
        q_target = rewards + (1. - terminals) * self.discount * target_v_values
        qf1_loss = 0.5 * torch.mean((q1_pred - q_target.detach()) ** 2)
        qf2_loss = 0.5 * torch.mean((q2_pred - q_target.detach()) ** 2)

        # VF Loss
        q1_new_acts = self.qf1(obs, new_actions)
        q2_new_acts = self.qf2(obs, new_actions)
        q_new_actions = torch.min(q1_new_acts, q2_new_acts)
        v_target = q_new_actions - log_pi
        vf_loss = 0.5 * torch.mean((v_pred - v_target.detach()) ** 2)

        # Policy Loss
        policy_loss = torch.mean(log_pi - q_new_actions)
        mean_reg_loss = self.policy_mean_reg_weight * (policy_mean ** 2).mean()
        std_reg_loss = self.policy_std_reg_weight * (policy_log_std ** 2).mean()
        policy_loss = policy_loss + mean_reg_loss + std_reg_loss

        # Update networks
        self.qf1_optimizer.zero_grad()
        qf1_loss.backward()
        self.qf1_optimizer.step()  # <-- IPL001

        self.qf2_optimizer.zero_grad()
        qf2_loss.backward()
        self.qf2_optimizer.step()

        self.vf_optimizer.zero_grad()
        vf_loss.backward()
        self.vf_optimizer.step()

        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()

        self.eval_statistics = OrderedDict(
            qf1_loss=qf1_loss.detach(), vf_loss=vf_loss.detach(), policy_loss=policy_loss.detach())
        return self.eval_statistics


def main():
    obs_dim, act_dim, n = 5, 2, 16
    policy = ReparamTanhMultivariateGaussianPolicy(obs_dim, act_dim)
    trainer = SoftActorCritic(policy, FlattenMlp(obs_dim + act_dim, 1), FlattenMlp(obs_dim + act_dim, 1),
                              FlattenMlp(obs_dim, 1))
    batch = {
        'rewards': torch.randn(n, 1), 'terminals': (torch.rand(n, 1) < 0.1).float(),
        'observations': torch.randn(n, obs_dim), 'actions': torch.rand(n, act_dim) * 2 - 1,
        'next_observations': torch.randn(n, obs_dim),
    }
    stats = trainer.train_step(batch)
    return stats['qf1_loss'], stats['policy_loss'], policy.last_fc.weight.detach().clone()


qf1_loss, policy_loss, policy_last_weight = main()
