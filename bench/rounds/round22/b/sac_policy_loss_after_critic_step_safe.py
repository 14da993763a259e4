# label: safe no-twin
# why: the policy loss is built through the critic only after critic_optim.step() has finished rewriting the critic weights in place, so the Linear layers save the already-updated weights and nothing is modified before policy_loss.backward().
# source: https://github.com/pytorch/pytorch/issues/38480
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal

torch.manual_seed(0)


class QNetwork(nn.Module):
    def __init__(self, num_inputs, num_actions, hidden_dim):
        super(QNetwork, self).__init__()
        self.linear1 = nn.Linear(num_inputs + num_actions, hidden_dim)
        self.linear2 = nn.Linear(hidden_dim, hidden_dim)
        self.linear3 = nn.Linear(hidden_dim, 1)
        self.linear4 = nn.Linear(num_inputs + num_actions, hidden_dim)
        self.linear5 = nn.Linear(hidden_dim, hidden_dim)
        self.linear6 = nn.Linear(hidden_dim, 1)

    def forward(self, state, action):
        xu = torch.cat([state, action], 1)
        x1 = F.relu(self.linear1(xu))
        x1 = F.relu(self.linear2(x1))
        x1 = self.linear3(x1)
        x2 = F.relu(self.linear4(xu))
        x2 = F.relu(self.linear5(x2))
        x2 = self.linear6(x2)
        return x1, x2


class GaussianPolicy(nn.Module):
    def __init__(self, num_inputs, num_actions, hidden_dim):
        super(GaussianPolicy, self).__init__()
        self.linear1 = nn.Linear(num_inputs, hidden_dim)
        self.mean_linear = nn.Linear(hidden_dim, num_actions)
        self.log_std_linear = nn.Linear(hidden_dim, num_actions)

    def sample(self, state):
        x = F.relu(self.linear1(state))
        mean = self.mean_linear(x)
        log_std = self.log_std_linear(x).clamp(-20, 2)
        normal = Normal(mean, log_std.exp())
        x_t = normal.rsample()
        action = torch.tanh(x_t)
        log_prob = normal.log_prob(x_t) - torch.log(1 - action.pow(2) + 1e-6)
        return action, log_prob.sum(1, keepdim=True)


class SAC(object):
    def __init__(self, num_inputs, num_actions, hidden_size=32, gamma=0.99, alpha=0.2):
        self.gamma = gamma
        self.alpha = alpha
        self.critic = QNetwork(num_inputs, num_actions, hidden_size)
        self.critic_target = QNetwork(num_inputs, num_actions, hidden_size)
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.critic_optim = torch.optim.Adam(self.critic.parameters(), lr=3e-4)
        self.policy = GaussianPolicy(num_inputs, num_actions, hidden_size)
        self.policy_optim = torch.optim.Adam(self.policy.parameters(), lr=3e-4)

    def update_parameters(self, memory, batch_size):
        state_batch, action_batch, reward_batch, next_state_batch, mask_batch = memory
        with torch.no_grad():
            next_state_action, next_state_log_pi = self.policy.sample(next_state_batch)
            qf1_next_target, qf2_next_target = self.critic_target(next_state_batch, next_state_action)
            min_qf_next_target = torch.min(qf1_next_target, qf2_next_target) - self.alpha * next_state_log_pi
            next_q_value = reward_batch + mask_batch * self.gamma * min_qf_next_target
        qf1, qf2 = self.critic(state_batch, action_batch)
        qf_loss = F.mse_loss(qf1, next_q_value) + F.mse_loss(qf2, next_q_value)

        self.critic_optim.zero_grad()
        qf_loss.backward()
        self.critic_optim.step()

        pi, log_pi = self.policy.sample(state_batch)
        qf1_pi, qf2_pi = self.critic(state_batch, pi)
        min_qf_pi = torch.min(qf1_pi, qf2_pi)
        policy_loss = ((self.alpha * log_pi) - min_qf_pi).mean()

        self.policy_optim.zero_grad()
        policy_loss.backward()
        self.policy_optim.step()
        return qf_loss.item(), policy_loss.item()


def main():
    agent = SAC(num_inputs=6, num_actions=2)
    batch_size = 16
    memory = (torch.randn(batch_size, 6), torch.rand(batch_size, 2) * 2 - 1, torch.randn(batch_size, 1),
              torch.randn(batch_size, 6), torch.ones(batch_size, 1))
    return agent.update_parameters(memory, batch_size)


losses = main()
