# label: hazard raises no-twin
# why: pi_loss is built through Q_net1/Q_net2, whose optimizers step in place (after their own retain_graph backward) before pi_loss.backward()
# source: https://github.com/sweetice/Deep-reinforcement-learning-with-pytorch/issues/50
import torch
import torch.nn as nn
from torch.distributions import Normal

torch.manual_seed(0)


class Actor(nn.Module):
    def __init__(self, state_dim, min_log_std=-20, max_log_std=2):
        super().__init__()
        self.fc1 = nn.Linear(state_dim, 32)
        self.mu_head = nn.Linear(32, 1)
        self.log_std_head = nn.Linear(32, 1)
        self.min_log_std, self.max_log_std = min_log_std, max_log_std

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        mu = self.mu_head(x)
        log_std = torch.clamp(self.log_std_head(x), self.min_log_std, self.max_log_std)
        return mu, log_std


class Critic(nn.Module):
    def __init__(self, state_dim):
        super().__init__()
        self.fc1 = nn.Linear(state_dim, 32)
        self.fc2 = nn.Linear(32, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Q(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.fc1 = nn.Linear(state_dim + action_dim, 32)
        self.fc2 = nn.Linear(32, 1)

    def forward(self, s, a):
        return self.fc2(torch.relu(self.fc1(torch.cat((s, a), -1))))


class SAC:
    def __init__(self, state_dim=3, action_dim=1):
        self.policy_net = Actor(state_dim)
        self.value_net = Critic(state_dim)
        self.Target_value_net = Critic(state_dim)
        self.Q_net1 = Q(state_dim, action_dim)
        self.Q_net2 = Q(state_dim, action_dim)
        self.policy_optimizer = torch.optim.Adam(self.policy_net.parameters(), lr=3e-4)
        self.value_optimizer = torch.optim.Adam(self.value_net.parameters(), lr=3e-3)
        self.Q1_optimizer = torch.optim.Adam(self.Q_net1.parameters(), lr=3e-3)
        self.Q2_optimizer = torch.optim.Adam(self.Q_net2.parameters(), lr=3e-3)
        self.value_criterion = nn.MSELoss()
        self.Q1_criterion = nn.MSELoss()
        self.Q2_criterion = nn.MSELoss()
        self.Target_value_net.load_state_dict(self.value_net.state_dict())

    def evaluate(self, state):
        batch_mu, batch_log_sigma = self.policy_net(state)
        batch_sigma = torch.exp(batch_log_sigma)
        dist = Normal(batch_mu, batch_sigma)
        noise = Normal(0, 1)
        z = noise.sample()
        action = torch.tanh(batch_mu + batch_sigma * z)
        log_prob = dist.log_prob(batch_mu + batch_sigma * z) - torch.log(1 - action.pow(2) + 1e-7)
        return action, log_prob, z, batch_mu, batch_log_sigma

    def update(self, bn_s, bn_a, bn_r, bn_s_, bn_d, gamma=0.99, tau=0.005):
        target_value = self.Target_value_net(bn_s_)
        next_q_value = bn_r + (1 - bn_d) * gamma * target_value

        excepted_value = self.value_net(bn_s)
        excepted_Q1 = self.Q_net1(bn_s, bn_a)
        excepted_Q2 = self.Q_net2(bn_s, bn_a)
        sample_action, log_prob, z, batch_mu, batch_log_sigma = self.evaluate(bn_s)
        excepted_new_Q = torch.min(self.Q_net1(bn_s, sample_action), self.Q_net2(bn_s, sample_action))
        next_value = excepted_new_Q - log_prob

        V_loss = self.value_criterion(excepted_value, next_value.detach()).mean()
        Q1_loss = self.Q1_criterion(excepted_Q1, next_q_value.detach()).mean()
        Q2_loss = self.Q2_criterion(excepted_Q2, next_q_value.detach()).mean()
        pi_loss = (log_prob - excepted_new_Q).mean()

        self.value_optimizer.zero_grad()
        V_loss.backward(retain_graph=True)
        nn.utils.clip_grad_norm_(self.value_net.parameters(), 0.5)
        self.value_optimizer.step()

        self.Q1_optimizer.zero_grad()
        Q1_loss.backward(retain_graph=True)
        nn.utils.clip_grad_norm_(self.Q_net1.parameters(), 0.5)
        self.Q1_optimizer.step()  # <-- IPL001: Q_net1 weights updated in place; pi_loss still needs them

        self.Q2_optimizer.zero_grad()
        Q2_loss.backward(retain_graph=True)
        nn.utils.clip_grad_norm_(self.Q_net2.parameters(), 0.5)
        self.Q2_optimizer.step()  # <-- IPL001: Q_net2 weights updated in place; pi_loss still needs them

        self.policy_optimizer.zero_grad()
        pi_loss.backward(retain_graph=True)
        nn.utils.clip_grad_norm_(self.policy_net.parameters(), 0.5)
        self.policy_optimizer.step()

        for target_param, param in zip(self.Target_value_net.parameters(), self.value_net.parameters()):
            target_param.data.copy_(target_param * (1 - tau) + param * tau)
        return pi_loss.detach()


agent = SAC()
pi_loss = agent.update(torch.randn(16, 3), torch.rand(16, 1) * 2 - 1, torch.randn(16, 1),
                       torch.randn(16, 3), torch.zeros(16, 1))
