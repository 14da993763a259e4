# label: safe no-twin
# why: the fix sums the two TD losses into qf_loss and does a single zero_grad/backward/step, so no optimizer step happens between the critic forward and its backward; the policy loss is computed afterwards from a fresh critic forward.
# source: https://github.com/pranz24/pytorch-soft-actor-critic/blob/master/sac.py (fix for https://github.com/pranz24/pytorch-soft-actor-critic/issues/31)
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal
from torch.optim import Adam

torch.manual_seed(0)

LOG_SIG_MAX = 2
LOG_SIG_MIN = -20
epsilon = 1e-6


class QNetwork(nn.Module):
    def __init__(self, num_inputs, num_actions, hidden_dim):
        super().__init__()
        # Q1 architecture
        self.linear1 = nn.Linear(num_inputs + num_actions, hidden_dim)
        self.linear2 = nn.Linear(hidden_dim, hidden_dim)
        self.linear3 = nn.Linear(hidden_dim, 1)
        # Q2 architecture
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
        super().__init__()
        self.linear1 = nn.Linear(num_inputs, hidden_dim)
        self.linear2 = nn.Linear(hidden_dim, hidden_dim)
        self.mean_linear = nn.Linear(hidden_dim, num_actions)
        self.log_std_linear = nn.Linear(hidden_dim, num_actions)

    def forward(self, state):
        x = F.relu(self.linear1(state))
        x = F.relu(self.linear2(x))
        mean = self.mean_linear(x)
        log_std = torch.clamp(self.log_std_linear(x), min=LOG_SIG_MIN, max=LOG_SIG_MAX)
        return mean, log_std

    def sample(self, state):
        mean, log_std = self.forward(state)
        std = log_std.exp()
        normal = Normal(mean, std)
        x_t = normal.rsample()
        action = torch.tanh(x_t)
        log_prob = normal.log_prob(x_t)
        log_prob -= torch.log(1 - action.pow(2) + epsilon)
        log_prob = log_prob.sum(1, keepdim=True)
        return action, log_prob, torch.tanh(mean)


class SAC(object):
    def __init__(self, num_inputs, num_actions, hidden_size=32, lr=3e-4, gamma=0.99, alpha=0.2):
        self.gamma = gamma
        self.alpha = alpha
        self.critic = QNetwork(num_inputs, num_actions, hidden_size)
        self.critic_optim = Adam(self.critic.parameters(), lr=lr)
        self.critic_target = QNetwork(num_inputs, num_actions, hidden_size)
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.policy = GaussianPolicy(num_inputs, num_actions, hidden_size)
        self.policy_optim = Adam(self.policy.parameters(), lr=lr)

    def update_parameters(self, memory):
        state_batch, action_batch, reward_batch, next_state_batch, mask_batch = memory

        with torch.no_grad():
            next_state_action, next_state_log_pi, _ = self.policy.sample(next_state_batch)
            qf1_next_target, qf2_next_target = self.critic_target(next_state_batch, next_state_action)
            min_qf_next_target = torch.min(qf1_next_target, qf2_next_target) - self.alpha * next_state_log_pi
            next_q_value = reward_batch + mask_batch * self.gamma * (min_qf_next_target)

        qf1, qf2 = self.critic(state_batch, action_batch)
        qf1_loss = F.mse_loss(qf1, next_q_value)
        qf2_loss = F.mse_loss(qf2, next_q_value)

        qf_loss = qf1_loss + qf2_loss

        self.critic_optim.zero_grad(set_to_none=False)
        qf_loss.backward()
        self.critic_optim.step()

        pi, log_pi, _ = self.policy.sample(state_batch)
        qf1_pi, qf2_pi = self.critic(state_batch, pi)
        min_qf_pi = torch.min(qf1_pi, qf2_pi)
        policy_loss = ((self.alpha * log_pi) - min_qf_pi).mean()

        self.policy_optim.zero_grad()
        policy_loss.backward()
        self.policy_optim.step()
        return qf1_loss.detach(), qf2_loss.detach(), policy_loss.detach()


def main():
    agent = SAC(num_inputs=6, num_actions=2)
    batch = 32
    memory = (
        torch.randn(batch, 6),
        torch.rand(batch, 2) * 2 - 1,
        torch.randn(batch, 1),
        torch.randn(batch, 6),
        (torch.rand(batch, 1) > 0.1).float(),
    )
    for updates in range(3):
        losses = agent.update_parameters(memory)
    return losses


qf1_loss, qf2_loss, policy_loss = main()
