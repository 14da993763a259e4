# label: safe no-twin
# why: fixed DDPG soft update: target parameters are overwritten with target.data.copy_ after the optimizer steps, outside any live graph, and the next forward uses the new values
# source: https://github.com/mimoralea/gdrl/pull/14
import torch
import torch.nn as nn

torch.manual_seed(0)


class FCQV(nn.Module):
    def __init__(self, input_dim, output_dim, hidden_dims=(16, 16)):
        super().__init__()
        self.input_layer = nn.Linear(input_dim, hidden_dims[0])
        self.hidden = nn.Linear(hidden_dims[0] + output_dim, hidden_dims[1])
        self.output_layer = nn.Linear(hidden_dims[1], 1)

    def forward(self, state, action):
        x = torch.relu(self.input_layer(state))
        x = torch.cat((x, action), dim=1)
        x = torch.relu(self.hidden(x))
        return self.output_layer(x)


class FCDP(nn.Module):
    def __init__(self, input_dim, action_dim, hidden_dims=(16, 16)):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(input_dim, hidden_dims[0]), nn.ReLU(), nn.Linear(hidden_dims[0], action_dim))

    def forward(self, state):
        return torch.tanh(self.net(state))


class DDPG:
    def __init__(self, nS=3, nA=2, tau=0.005, gamma=0.99):
        self.tau, self.gamma = tau, gamma
        self.target_value_model, self.online_value_model = FCQV(nS, nA), FCQV(nS, nA)
        self.target_policy_model, self.online_policy_model = FCDP(nS, nA), FCDP(nS, nA)
        self.update_networks(tau=1.0)
        self.value_optimizer = torch.optim.Adam(self.online_value_model.parameters(), lr=1e-3)
        self.policy_optimizer = torch.optim.Adam(self.online_policy_model.parameters(), lr=1e-3)

    def optimize_model(self, experiences):
        states, actions, rewards, next_states, is_terminals = experiences
        argmax_a_q_sp = self.target_policy_model(next_states)
        max_a_q_sp = self.target_value_model(next_states, argmax_a_q_sp)
        target_q_sa = rewards + self.gamma * max_a_q_sp * (1 - is_terminals)
        q_sa = self.online_value_model(states, actions)
        td_error = q_sa - target_q_sa.detach()
        value_loss = td_error.pow(2).mul(0.5).mean()
        self.value_optimizer.zero_grad()
        value_loss.backward()
        self.value_optimizer.step()

        argmax_a_q_s = self.online_policy_model(states)
        max_a_q_s = self.online_value_model(states, argmax_a_q_s)
        policy_loss = -max_a_q_s.mean()
        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()
        return value_loss.detach(), policy_loss.detach()

    def update_networks(self, tau=None):
        tau = self.tau if tau is None else tau
        for target, online in zip(self.target_value_model.parameters(), self.online_value_model.parameters()):
            target_ratio = (1.0 - tau) * target.data
            online_ratio = tau * online.data
            mixed_weights = target_ratio + online_ratio
            target.data.copy_(mixed_weights)
        for target, online in zip(self.target_policy_model.parameters(), self.online_policy_model.parameters()):
            target_ratio = (1.0 - tau) * target.data
            online_ratio = tau * online.data
            mixed_weights = target_ratio + online_ratio
            target.data.copy_(mixed_weights)


agent = DDPG()
losses = []
for step in range(3):
    batch = (torch.randn(6, 3), torch.rand(6, 2) * 2 - 1, torch.randn(6, 1), torch.randn(6, 3), torch.zeros(6, 1))
    losses.append(torch.stack(agent.optimize_model(batch)))
    agent.update_networks()
loss_history = torch.stack(losses)
target_q_weight = agent.target_value_model.output_layer.weight.detach().clone()
