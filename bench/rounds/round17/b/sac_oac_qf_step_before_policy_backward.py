# label: hazard raises no-twin
# why: the Q-network optimizers step (in-place parameter updates) after policy_loss was built through qf1/qf2 but before policy_loss.backward(), so the saved Q weights are stale.
# source: https://github.com/microsoft/oac-explore/issues/27
import torch
import torch.nn as nn

torch.manual_seed(0)


class FlattenMlp(nn.Module):
    def __init__(self, in_size, hidden, out_size):
        super().__init__()
        self.fc0 = nn.Linear(in_size, hidden)
        self.last_fc = nn.Linear(hidden, out_size)

    def forward(self, *inputs):
        h = torch.cat(inputs, dim=1)
        return self.last_fc(torch.relu(self.fc0(h)))


class TanhGaussianPolicy(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden):
        super().__init__()
        self.fc0 = nn.Linear(obs_dim, hidden)
        self.mean = nn.Linear(hidden, act_dim)
        self.log_std = nn.Linear(hidden, act_dim)

    def forward(self, obs):
        h = torch.relu(self.fc0(obs))
        mean, log_std = self.mean(h), self.log_std(h).clamp(-5, 2)
        std = log_std.exp()
        pre_tanh = mean + std * torch.randn_like(mean)
        action = torch.tanh(pre_tanh)
        log_prob = (-0.5 * ((pre_tanh - mean) / std) ** 2 - log_std).sum(1, keepdim=True)
        log_prob = log_prob - torch.log(1 - action ** 2 + 1e-6).sum(1, keepdim=True)
        return action, mean, log_std, log_prob


class SACTrainer:
    def __init__(self, policy, qf1, qf2, target_qf1, target_qf2, discount=0.99):
        self.policy, self.qf1, self.qf2 = policy, qf1, qf2
        self.target_qf1, self.target_qf2 = target_qf1, target_qf2
        self.discount = discount
        self.qf_criterion = nn.MSELoss()
        self.policy_optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)
        self.qf1_optimizer = torch.optim.Adam(qf1.parameters(), lr=3e-4)
        self.qf2_optimizer = torch.optim.Adam(qf2.parameters(), lr=3e-4)

    def train_from_torch(self, batch):
        rewards, terminals = batch["rewards"], batch["terminals"]
        obs, actions, next_obs = batch["observations"], batch["actions"], batch["next_observations"]
        alpha = 1.0

        new_obs_actions, policy_mean, policy_log_std, log_pi = self.policy(obs)
        q_new_actions = torch.min(self.qf1(obs, new_obs_actions), self.qf2(obs, new_obs_actions))
        policy_loss = (alpha * log_pi - q_new_actions).mean()

        q1_pred = self.qf1(obs, actions)
        q2_pred = self.qf2(obs, actions)
        new_next_actions, _, _, new_log_pi = self.policy(next_obs)
        target_q_values = torch.min(
            self.target_qf1(next_obs, new_next_actions),
            self.target_qf2(next_obs, new_next_actions),
        ) - alpha * new_log_pi
        q_target = rewards + (1.0 - terminals) * self.discount * target_q_values
        qf1_loss = self.qf_criterion(q1_pred, q_target.detach())
        qf2_loss = self.qf_criterion(q2_pred, q_target.detach())

        self.qf1_optimizer.zero_grad()
        qf1_loss.backward(retain_graph=True)
        self.qf1_optimizer.step()  # <-- IPL001: updates qf1 weights saved by q_new_actions
        self.qf2_optimizer.zero_grad()
        qf2_loss.backward(retain_graph=True)
        self.qf2_optimizer.step()  # <-- IPL001: updates qf2 weights saved by q_new_actions
        self.policy_optimizer.zero_grad()
        policy_loss.backward(retain_graph=True)
        self.policy_optimizer.step()
        return policy_loss, qf1_loss, qf2_loss


obs_dim, act_dim = 4, 2
policy = TanhGaussianPolicy(obs_dim, act_dim, 16)
qf1 = FlattenMlp(obs_dim + act_dim, 16, 1)
qf2 = FlattenMlp(obs_dim + act_dim, 16, 1)
target_qf1 = FlattenMlp(obs_dim + act_dim, 16, 1)
target_qf2 = FlattenMlp(obs_dim + act_dim, 16, 1)
trainer = SACTrainer(policy, qf1, qf2, target_qf1, target_qf2)
batch = {
    "observations": torch.randn(8, obs_dim),
    "actions": torch.rand(8, act_dim) * 2 - 1,
    "next_observations": torch.randn(8, obs_dim),
    "rewards": torch.randn(8, 1),
    "terminals": torch.zeros(8, 1),
}
policy_loss, qf1_loss, qf2_loss = trainer.train_from_torch(batch)
