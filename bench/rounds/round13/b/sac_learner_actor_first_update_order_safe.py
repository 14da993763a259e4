# label: safe
# why: fixed ordering: the actor loss is backpropagated and stepped first, so the later Q/V optimizer steps only touch weights whose graphs are already consumed
# source: https://github.com/medipixel/rl_algorithms/pull/274
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Normal

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self, input_size, output_size, hidden=16):
        super().__init__()
        self.fc1 = nn.Linear(input_size, hidden)
        self.fc2 = nn.Linear(hidden, output_size)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class TanhGaussianActor(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.body = MLP(state_dim, 2 * action_dim)

    def forward(self, state):
        mu, log_std = self.body(state).chunk(2, dim=-1)
        std = log_std.clamp(-20, 2).exp()
        dist = Normal(mu, std)
        z = dist.rsample()
        action = torch.tanh(z)
        log_prob = (dist.log_prob(z) - torch.log(1 - action.pow(2) + 1e-7)).sum(-1, keepdim=True)
        return action, log_prob


class SACLearner:
    def __init__(self, state_dim, action_dim, gamma=0.99, tau=5e-3, w_entropy=0.2):
        self.actor = TanhGaussianActor(state_dim, action_dim)
        self.vf = MLP(state_dim, 1)
        self.vf_target = MLP(state_dim, 1)
        self.vf_target.load_state_dict(self.vf.state_dict())
        self.qf_1 = MLP(state_dim + action_dim, 1)
        self.qf_2 = MLP(state_dim + action_dim, 1)
        self.actor_optim = optim.Adam(self.actor.parameters(), lr=3e-4)
        self.vf_optim = optim.Adam(self.vf.parameters(), lr=3e-4)
        self.qf_1_optim = optim.Adam(self.qf_1.parameters(), lr=3e-4)
        self.qf_2_optim = optim.Adam(self.qf_2.parameters(), lr=3e-4)
        self.gamma, self.tau, self.w_entropy = gamma, tau, w_entropy

    def update_model(self, experience):
        states, actions, rewards, next_states, dones = experience
        new_actions, log_prob = self.actor(states)

        # Q function loss
        masks = 1 - dones
        states_actions = torch.cat((states, actions), dim=-1)
        q_1_pred = self.qf_1(states_actions)
        q_2_pred = self.qf_2(states_actions)
        v_target = self.vf_target(next_states)
        q_target = rewards + self.gamma * v_target * masks
        qf_1_loss = F.mse_loss(q_1_pred, q_target.detach())
        qf_2_loss = F.mse_loss(q_2_pred, q_target.detach())

        # V function loss
        states_new_actions = torch.cat((states, new_actions), dim=-1)
        v_pred = self.vf(states)
        q_pred = torch.min(self.qf_1(states_new_actions), self.qf_2(states_new_actions))
        v_target = q_pred - self.w_entropy * log_prob
        vf_loss = F.mse_loss(v_pred, v_target.detach())

        # train actor first (torch >= 1.5 forbids stepping Q before this backward)
        actor_loss = (self.w_entropy * log_prob - q_pred).mean()
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()

        # train Q functions
        self.qf_1_optim.zero_grad()
        qf_1_loss.backward()
        self.qf_1_optim.step()

        self.qf_2_optim.zero_grad()
        qf_2_loss.backward()
        self.qf_2_optim.step()

        # train V function
        self.vf_optim.zero_grad()
        vf_loss.backward()
        self.vf_optim.step()
        return actor_loss, qf_1_loss, qf_2_loss, vf_loss


learner = SACLearner(state_dim=3, action_dim=2)
experience = (torch.randn(8, 3), torch.rand(8, 2) * 2 - 1, torch.randn(8, 1),
              torch.randn(8, 3), torch.zeros(8, 1))
actor_loss, qf_1_loss, qf_2_loss, vf_loss = learner.update_model(experience)
