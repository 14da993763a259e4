# label: hazard raises no-twin
# why: the CQL penalty samples actions from the policy without detaching them, so qf1_loss's graph runs through the policy network, whose weights policy_optimizer.step() has already updated in place
# source: https://github.com/aviralkumar2907/CQL/issues/5
import torch
import torch.nn as nn

torch.manual_seed(0)


class FlattenMlp(nn.Module):
    def __init__(self, input_size, output_size, hidden=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(input_size, hidden), nn.ReLU(), nn.Linear(hidden, output_size))

    def forward(self, *inputs):
        return self.net(torch.cat(inputs, dim=-1))


class TanhGaussianPolicy(nn.Module):
    def __init__(self, obs_dim, action_dim, hidden=16):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU())
        self.last_fc = nn.Linear(hidden, action_dim)
        self.last_fc_log_std = nn.Linear(hidden, action_dim)

    def forward(self, obs, reparameterize=True):
        h = self.fc(obs)
        mean = self.last_fc(h)
        log_std = self.last_fc_log_std(h).clamp(-5, 2)
        std = log_std.exp()
        pre_tanh = mean + std * torch.randn_like(std)
        action = torch.tanh(pre_tanh)
        log_prob = (-0.5 * ((pre_tanh - mean) / std).pow(2) - log_std).sum(-1, keepdim=True)
        log_prob = log_prob - torch.log(1 - action.pow(2) + 1e-6).sum(-1, keepdim=True)
        return action, mean, log_std, log_prob


class CQLTrainer:
    def __init__(self, obs_dim=4, action_dim=2, num_random=3, temp=1.0, min_q_weight=5.0):
        self.policy = TanhGaussianPolicy(obs_dim, action_dim)
        self.qf1 = FlattenMlp(obs_dim + action_dim, 1)
        self.policy_optimizer = torch.optim.Adam(self.policy.parameters(), lr=3e-4)
        self.qf1_optimizer = torch.optim.Adam(self.qf1.parameters(), lr=3e-4)
        self.num_random, self.temp, self.min_q_weight = num_random, temp, min_q_weight
        self.discount, self.alpha = 0.99, 0.2
        self.action_dim = action_dim

    def _get_tensor_values(self, obs, actions, network=None):
        action_shape = actions.shape[0]
        obs_shape = obs.shape[0]
        num_repeat = int(action_shape / obs_shape)
        obs_temp = obs.unsqueeze(1).repeat(1, num_repeat, 1).view(obs.shape[0] * num_repeat, obs.shape[1])
        preds = network(obs_temp, actions)
        return preds.view(obs.shape[0], num_repeat, 1)

    def _get_policy_actions(self, obs, num_actions, network=None):
        obs_temp = obs.unsqueeze(1).repeat(1, num_actions, 1).view(obs.shape[0] * num_actions, obs.shape[1])
        new_obs_actions, _, _, new_obs_log_pi = network(obs_temp, reparameterize=True)
        return new_obs_actions, new_obs_log_pi.view(obs.shape[0], num_actions, 1)

    def train_from_torch(self, batch):
        rewards, terminals = batch["rewards"], batch["terminals"]
        obs, actions, next_obs = batch["observations"], batch["actions"], batch["next_observations"]

        """Policy and Alpha Loss"""
        new_obs_actions, policy_mean, policy_log_std, log_pi = self.policy(obs, reparameterize=True)
        q_new_actions = self.qf1(obs, new_obs_actions)
        policy_loss = (self.alpha * log_pi - q_new_actions).mean()

        """QF Loss"""
        q1_pred = self.qf1(obs, actions)
        with torch.no_grad():
            new_next_actions, _, _, new_log_pi = self.policy(next_obs, reparameterize=True)
            target_q_values = self.qf1(next_obs, new_next_actions) - self.alpha * new_log_pi
            q_target = rewards + (1.0 - terminals) * self.discount * target_q_values
        qf1_loss = nn.functional.mse_loss(q1_pred, q_target)

        random_actions_tensor = torch.empty(q1_pred.shape[0] * self.num_random, self.action_dim).uniform_(-1, 1)
        curr_actions_tensor, curr_log_pis = self._get_policy_actions(obs, num_actions=self.num_random, network=self.policy)
        new_curr_actions_tensor, new_log_pis = self._get_policy_actions(next_obs, num_actions=self.num_random, network=self.policy)
        q1_rand = self._get_tensor_values(obs, random_actions_tensor, network=self.qf1)
        q1_curr_actions = self._get_tensor_values(obs, curr_actions_tensor, network=self.qf1)
        q1_next_actions = self._get_tensor_values(obs, new_curr_actions_tensor, network=self.qf1)
        random_density = torch.log(torch.tensor(0.5 ** self.action_dim))
        cat_q1 = torch.cat(
            [q1_rand - random_density, q1_next_actions - new_log_pis.detach(), q1_curr_actions - curr_log_pis.detach()], 1
        )
        min_qf1_loss = torch.logsumexp(cat_q1 / self.temp, dim=1).mean() * self.min_q_weight * self.temp
        min_qf1_loss = min_qf1_loss - q1_pred.mean() * self.min_q_weight
        qf1_loss = qf1_loss + min_qf1_loss

        """Update networks"""
        self.policy_optimizer.zero_grad()
        policy_loss.backward(retain_graph=False)
        self.policy_optimizer.step()  # <-- IPL001: policy weights change in place while qf1_loss's graph still goes through the policy

        self.qf1_optimizer.zero_grad()
        qf1_loss.backward(retain_graph=True)
        self.qf1_optimizer.step()
        return policy_loss.detach(), qf1_loss.detach()


trainer = CQLTrainer()
batch = {
    "observations": torch.randn(8, 4),
    "actions": torch.rand(8, 2) * 2 - 1,
    "next_observations": torch.randn(8, 4),
    "rewards": torch.randn(8, 1),
    "terminals": torch.zeros(8, 1),
}
policy_loss, qf1_loss = trainer.train_from_torch(batch)
