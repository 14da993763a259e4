# label: safe
# why: the fixed trainer updates the policy first, so the Q optimizers only step after every graph that saved the Q weights has been backpropagated.
# source: https://github.com/rail-berkeley/rlkit/pull/109
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


def mlp(in_dim, out_dim, hidden=16):
    return nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, out_dim))


class ConcatMlp(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.net = mlp(obs_dim + act_dim, 1)

    def forward(self, obs, act):
        return self.net(torch.cat([obs, act], dim=1))


class TanhGaussianPolicy(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.net = mlp(obs_dim, 2 * act_dim)

    def forward(self, obs, reparameterize=True, return_log_prob=True):
        mean, log_std = self.net(obs).chunk(2, dim=1)
        std = log_std.clamp(-5, 2).exp()
        normal = torch.distributions.Normal(mean, std)
        pre_tanh = normal.rsample()
        action = torch.tanh(pre_tanh)
        log_prob = (normal.log_prob(pre_tanh) - torch.log(1 - action.pow(2) + 1e-6)).sum(1, keepdim=True)
        return action, mean, log_std, log_prob


class SACTrainer:
    def __init__(self, obs_dim, act_dim):
        self.policy = TanhGaussianPolicy(obs_dim, act_dim)
        self.qf1 = ConcatMlp(obs_dim, act_dim)
        self.qf2 = ConcatMlp(obs_dim, act_dim)
        self.target_qf1 = ConcatMlp(obs_dim, act_dim)
        self.target_qf2 = ConcatMlp(obs_dim, act_dim)
        self.target_qf1.load_state_dict(self.qf1.state_dict())
        self.target_qf2.load_state_dict(self.qf2.state_dict())
        self.qf_criterion = nn.MSELoss()
        self.policy_optimizer = optim.Adam(self.policy.parameters(), lr=1e-3)
        self.qf1_optimizer = optim.Adam(self.qf1.parameters(), lr=1e-3)
        self.qf2_optimizer = optim.Adam(self.qf2.parameters(), lr=1e-3)
        self.discount = 0.99
        self.reward_scale = 1.0

    def train_from_torch(self, batch):
        rewards = batch["rewards"]
        terminals = batch["terminals"]
        obs = batch["observations"]
        actions = batch["actions"]
        next_obs = batch["next_observations"]

        # Policy and Alpha Loss
        new_obs_actions, policy_mean, policy_log_std, log_pi = self.policy(obs)
        alpha = 1.0
        q_new_actions = torch.min(self.qf1(obs, new_obs_actions), self.qf2(obs, new_obs_actions))
        policy_loss = (alpha * log_pi - q_new_actions).mean()

        # QF Loss
        q1_pred = self.qf1(obs, actions)
        q2_pred = self.qf2(obs, actions)
        new_next_actions, _, _, new_log_pi = self.policy(next_obs)
        target_q_values = torch.min(
            self.target_qf1(next_obs, new_next_actions),
            self.target_qf2(next_obs, new_next_actions),
        ) - alpha * new_log_pi
        q_target = self.reward_scale * rewards + (1. - terminals) * self.discount * target_q_values
        qf1_loss = self.qf_criterion(q1_pred, q_target.detach())
        qf2_loss = self.qf_criterion(q2_pred, q_target.detach())

        # Update networks
        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()

        self.qf1_optimizer.zero_grad()
        qf1_loss.backward()
        self.qf1_optimizer.step()

        self.qf2_optimizer.zero_grad()
        qf2_loss.backward()
        self.qf2_optimizer.step()
        return policy_loss.detach(), qf1_loss.detach(), qf2_loss.detach()


trainer = SACTrainer(4, 2)
batch = {
    "rewards": torch.randn(8, 1),
    "terminals": torch.zeros(8, 1),
    "observations": torch.randn(8, 4),
    "actions": torch.rand(8, 2) * 2 - 1,
    "next_observations": torch.randn(8, 4),
}
policy_loss, qf1_loss, qf2_loss = trainer.train_from_torch(batch)
