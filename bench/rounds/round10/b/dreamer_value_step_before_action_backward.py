# label: hazard raises no-twin
# why: value_optimizer.step() rewrites the value model's weights in place before action_loss.backward(), but the lambda targets that action_loss depends on were computed through those weights.
# source: https://github.com/cross32768/Dreamer_PyTorch/issues/2
import torch
import torch.nn as nn
from torch.nn.functional import mse_loss
from torch.nn.utils import clip_grad_norm_

torch.manual_seed(0)

state_dim, rnn_hidden_dim, action_dim = 4, 6, 2
imagination_horizon, batch = 3, 5
gamma, lambda_ = 0.9, 0.95


class RecurrentStateSpaceModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc_state_action = nn.Linear(state_dim + action_dim, rnn_hidden_dim)
        self.rnn = nn.GRUCell(rnn_hidden_dim, rnn_hidden_dim)
        self.fc_state_mean_prior = nn.Linear(rnn_hidden_dim, state_dim)

    def prior(self, state, action, rnn_hidden):
        hidden = torch.relu(self.fc_state_action(torch.cat([state, action], dim=1)))
        rnn_hidden = self.rnn(hidden, rnn_hidden)
        return torch.tanh(self.fc_state_mean_prior(rnn_hidden)), rnn_hidden


class MLPModel(nn.Module):
    def __init__(self, out_dim):
        super().__init__()
        self.fc1 = nn.Linear(state_dim + rnn_hidden_dim, 16)
        self.fc2 = nn.Linear(16, out_dim)

    def forward(self, state, rnn_hidden):
        return self.fc2(torch.relu(self.fc1(torch.cat([state, rnn_hidden], dim=1))))


def lambda_target(rewards, values, gamma, lambda_):
    V_lambda = torch.zeros_like(rewards)
    H = rewards.shape[0] - 1
    V_n = torch.zeros_like(rewards)
    V_n[H] = values[H]
    for n in range(1, H + 1):
        V_n[:-n] = (gamma ** n) * values[n:]
        for k in range(1, n + 1):
            if k == n:
                V_n[:-n] += (gamma ** (n - 1)) * rewards[k:]
            else:
                V_n[:-n] += (gamma ** (k - 1)) * rewards[k:-n + k]
        if n == H:
            V_lambda += (lambda_ ** (H - 1)) * V_n
        else:
            V_lambda += (1 - lambda_) * (lambda_ ** (n - 1)) * V_n
    return V_lambda


rssm = RecurrentStateSpaceModel()
reward_model = MLPModel(1)
value_model = MLPModel(1)
action_model = MLPModel(action_dim)
value_optimizer = torch.optim.Adam(value_model.parameters(), lr=1e-3)
action_optimizer = torch.optim.Adam(action_model.parameters(), lr=1e-3)

flatten_states = torch.randn(batch, state_dim).detach()
flatten_rnn_hiddens = torch.randn(batch, rnn_hidden_dim).detach()

imaginated_states = []
imaginated_rnn_hiddens = []
for h in range(imagination_horizon):
    actions = torch.tanh(action_model(flatten_states, flatten_rnn_hiddens))
    flatten_states, flatten_rnn_hiddens = rssm.prior(flatten_states, actions, flatten_rnn_hiddens)
    imaginated_states.append(flatten_states)
    imaginated_rnn_hiddens.append(flatten_rnn_hiddens)
imaginated_states = torch.stack(imaginated_states)
imaginated_rnn_hiddens = torch.stack(imaginated_rnn_hiddens)

flatten_imaginated_states = imaginated_states.view(-1, state_dim)
flatten_imaginated_rnn_hiddens = imaginated_rnn_hiddens.view(-1, rnn_hidden_dim)
imaginated_rewards = reward_model(flatten_imaginated_states, flatten_imaginated_rnn_hiddens).view(imagination_horizon, -1)
imaginated_values = value_model(flatten_imaginated_states, flatten_imaginated_rnn_hiddens).view(imagination_horizon, -1)
lambda_target_values = lambda_target(imaginated_rewards, imaginated_values, gamma, lambda_)

# update value model
value_pred = value_model(flatten_imaginated_states.detach(), flatten_imaginated_rnn_hiddens.detach()).view(imagination_horizon, -1)
value_loss = 0.5 * mse_loss(value_pred, lambda_target_values.detach())
value_optimizer.zero_grad()
value_loss.backward()
clip_grad_norm_(value_model.parameters(), 100.0)
value_optimizer.step()  # <-- IPL001: value weights are saved in lambda_target_values' graph

# update action model (multiply -1 for gradient ascent)
action_loss = -1 * (lambda_target_values.mean())
action_optimizer.zero_grad()
action_loss.backward()
clip_grad_norm_(action_model.parameters(), 100.0)
action_optimizer.step()
