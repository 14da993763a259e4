# label: hazard raises no-twin
# why: the critic optimizer steps (updating the Q-network weights in place) before policy_loss.backward(), but policy_loss was computed through the same critic whose weights were saved for backward, so autograd finds them at a newer version.
# source: https://github.com/Xingyu-Lin/mbpo_pytorch/issues/6
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Adam

torch.manual_seed(0)


class QNetwork(nn.Module):
    def __init__(self, num_inputs, num_actions, hidden_dim):
        super().__init__()
        self.linear1 = nn.Linear(num_inputs + num_actions, hidden_dim)
        self.linear2 = nn.Linear(hidden_dim, 1)
        self.linear3 = nn.Linear(num_inputs + num_actions, hidden_dim)
        self.linear4 = nn.Linear(hidden_dim, 1)

    def forward(self, state, action):
        xu = torch.cat([state, action], 1)
        x1 = self.linear2(F.relu(self.linear1(xu)))
        x2 = self.linear4(F.relu(self.linear3(xu)))
        return x1, x2


class GaussianPolicy(nn.Module):
    def __init__(self, num_inputs, num_actions, hidden_dim):
        super().__init__()
        self.linear1 = nn.Linear(num_inputs, hidden_dim)
        self.mean_linear = nn.Linear(hidden_dim, num_actions)
        self.log_std_linear = nn.Linear(hidden_dim, num_actions)

    def sample(self, state):
        x = F.relu(self.linear1(state))
        mean = self.mean_linear(x)
        log_std = self.log_std_linear(x).clamp(-20, 2)
        std = log_std.exp()
        normal = torch.distributions.Normal(mean, std)
        x_t = normal.rsample()
        y_t = torch.tanh(x_t)
        log_prob = normal.log_prob(x_t) - torch.log(1 - y_t.pow(2) + 1e-6)
        return y_t, log_prob.sum(1, keepdim=True), torch.tanh(mean)


class SAC(object):
    def __init__(self, num_inputs, num_actions, hidden_size=32):
        self.gamma, self.alpha = 0.99, 0.2
        self.critic = QNetwork(num_inputs, num_actions, hidden_size)
        self.critic_optim = Adam(self.critic.parameters(), lr=3e-4)
        self.critic_target = QNetwork(num_inputs, num_actions, hidden_size)
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.policy = GaussianPolicy(num_inputs, num_actions, hidden_size)
        self.policy_optim = Adam(self.policy.parameters(), lr=3e-4)

    def update_parameters(self, memory):
        state_batch, action_batch, reward_batch, next_state_batch, mask_batch = memory
        with torch.no_grad():
            next_state_action, next_state_log_pi, _ = self.policy.sample(next_state_batch)
            qf1_next_target, qf2_next_target = self.critic_target(next_state_batch, next_state_action)
            min_qf_next_target = torch.min(qf1_next_target, qf2_next_target) - self.alpha * next_state_log_pi
            next_q_value = reward_batch + mask_batch * self.gamma * min_qf_next_target

        qf1, qf2 = self.critic(state_batch, action_batch)
        qf1_loss = F.mse_loss(qf1, next_q_value)
        qf2_loss = F.mse_loss(qf2, next_q_value)

        pi, log_pi, _ = self.policy.sample(state_batch)
        qf1_pi, qf2_pi = self.critic(state_batch, pi)
        min_qf_pi = torch.min(qf1_pi, qf2_pi)
        policy_loss = ((self.alpha * log_pi) - min_qf_pi).mean()

        self.critic_optim.zero_grad()
        (qf1_loss + qf2_loss).backward()
        self.critic_optim.step()  # <-- IPL001

        self.policy_optim.zero_grad()
        policy_loss.backward()
        self.policy_optim.step()
        return qf1_loss.item(), qf2_loss.item(), policy_loss.item()


def main():
    agent = SAC(num_inputs=6, num_actions=2)
    batch = 16
    memory = (
        torch.randn(batch, 6),
        torch.rand(batch, 2) * 2 - 1,
        torch.randn(batch, 1),
        torch.randn(batch, 6),
        torch.ones(batch, 1),
    )
    agent.update_parameters(memory)
    return agent.policy.mean_linear.weight.detach().clone()


policy_weight = main()
