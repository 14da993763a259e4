# label: safe
# why: NoisyLinear refreshes its epsilon buffers with copy_ only between learning steps (and for the target net inside no_grad before its forward), and the categorical projection index_adds into a fresh buffer under no_grad.
# source: https://github.com/Kaixhin/Rainbow/blob/087ec49508963240a026782e7a051fc5fc78dc1d/agent.py
import math

import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


# Factorised NoisyLinear layer with bias
class NoisyLinear(nn.Module):
  def __init__(self, in_features, out_features, std_init=0.5):
    super(NoisyLinear, self).__init__()
    self.in_features = in_features
    self.out_features = out_features
    self.std_init = std_init
    mu_range = 1 / math.sqrt(self.in_features)
    self.weight_mu = nn.Parameter(torch.rand(out_features, in_features) * 2 * mu_range - mu_range)
    self.weight_sigma = nn.Parameter(torch.full((out_features, in_features), std_init / math.sqrt(in_features)))
    self.register_buffer('weight_epsilon', torch.zeros(out_features, in_features))
    self.bias_mu = nn.Parameter(torch.rand(out_features) * 2 * mu_range - mu_range)
    self.bias_sigma = nn.Parameter(torch.full((out_features,), std_init / math.sqrt(out_features)))
    self.register_buffer('bias_epsilon', torch.zeros(out_features))
    self.reset_noise()

  def _scale_noise(self, size):
    x = torch.randn(size)
    return x.sign().mul_(x.abs().sqrt_())

  def reset_noise(self):
    epsilon_in = self._scale_noise(self.in_features)
    epsilon_out = self._scale_noise(self.out_features)
    self.weight_epsilon.copy_(epsilon_out.ger(epsilon_in))
    self.bias_epsilon.copy_(epsilon_out)

  def forward(self, input):
    if self.training:
      return F.linear(input, self.weight_mu + self.weight_sigma * self.weight_epsilon, self.bias_mu + self.bias_sigma * self.bias_epsilon)
    else:
      return F.linear(input, self.weight_mu, self.bias_mu)


class DQN(nn.Module):
  def __init__(self, in_size, action_space, atoms, hidden_size=16, noisy_std=0.1):
    super(DQN, self).__init__()
    self.atoms = atoms
    self.action_space = action_space
    self.conv_output_size = in_size
    self.fc_h_v = NoisyLinear(self.conv_output_size, hidden_size, std_init=noisy_std)
    self.fc_h_a = NoisyLinear(self.conv_output_size, hidden_size, std_init=noisy_std)
    self.fc_z_v = NoisyLinear(hidden_size, self.atoms, std_init=noisy_std)
    self.fc_z_a = NoisyLinear(hidden_size, action_space * self.atoms, std_init=noisy_std)

  def forward(self, x, log=False):
    x = x.view(-1, self.conv_output_size)
    v = self.fc_z_v(F.relu(self.fc_h_v(x)))  # Value stream
    a = self.fc_z_a(F.relu(self.fc_h_a(x)))  # Advantage stream
    v, a = v.view(-1, 1, self.atoms), a.view(-1, self.action_space, self.atoms)
    q = v + a - a.mean(1, keepdim=True)  # Combine streams
    if log:
      q = F.log_softmax(q, dim=2)
    else:
      q = F.softmax(q, dim=2)
    return q

  def reset_noise(self):
    for name, module in self.named_children():
      if 'fc' in name:
        module.reset_noise()


class Agent():
  def __init__(self, in_size=6, action_space=3, atoms=5, V_min=-2., V_max=2., batch_size=4, multi_step=3, discount=0.99):
    self.action_space = action_space
    self.atoms = atoms
    self.Vmin = V_min
    self.Vmax = V_max
    self.support = torch.linspace(V_min, V_max, self.atoms)
    self.delta_z = (V_max - V_min) / (self.atoms - 1)
    self.batch_size = batch_size
    self.n = multi_step
    self.discount = discount
    self.online_net = DQN(in_size, action_space, atoms)
    self.online_net.train()
    self.target_net = DQN(in_size, action_space, atoms)
    self.update_target_net()
    self.target_net.train()
    for param in self.target_net.parameters():
      param.requires_grad = False
    self.optimiser = torch.optim.Adam(self.online_net.parameters(), lr=1e-3, eps=1.5e-4)

  def reset_noise(self):
    self.online_net.reset_noise()

  def act(self, state):
    with torch.no_grad():
      return (self.online_net(state.unsqueeze(0)) * self.support).sum(2).argmax(1).item()

  def learn(self, states, actions, returns, next_states, nonterminals, weights):
    log_ps = self.online_net(states, log=True)
    log_ps_a = log_ps[range(self.batch_size), actions]

    with torch.no_grad():
      pns = self.online_net(next_states)
      dns = self.support.expand_as(pns) * pns
      argmax_indices_ns = dns.sum(2).argmax(1)
      self.target_net.reset_noise()  # Sample new target net noise
      pns = self.target_net(next_states)
      pns_a = pns[range(self.batch_size), argmax_indices_ns]

      Tz = returns.unsqueeze(1) + nonterminals * (self.discount ** self.n) * self.support.unsqueeze(0)
      Tz = Tz.clamp(min=self.Vmin, max=self.Vmax)
      b = (Tz - self.Vmin) / self.delta_z
      l, u = b.floor().to(torch.int64), b.ceil().to(torch.int64)
      # Fix disappearing probability mass when l = b = u (b is int)
      l[(u > 0) * (l == u)] -= 1
      u[(l < (self.atoms - 1)) * (l == u)] += 1

      m = states.new_zeros(self.batch_size, self.atoms)
      offset = torch.linspace(0, ((self.batch_size - 1) * self.atoms), self.batch_size).unsqueeze(1).expand(self.batch_size, self.atoms).to(actions)
      m.view(-1).index_add_(0, (l + offset).view(-1), (pns_a * (u.float() - b)).view(-1))
      m.view(-1).index_add_(0, (u + offset).view(-1), (pns_a * (b - l.float())).view(-1))

    loss = -torch.sum(m * log_ps_a, 1)
    self.online_net.zero_grad()
    (weights * loss).mean().backward()
    self.optimiser.step()
    return loss.detach()

  def update_target_net(self):
    self.target_net.load_state_dict(self.online_net.state_dict())


dqn = Agent()
losses = []
for T in range(3):
  if T % 1 == 0:
    dqn.reset_noise()  # Draw a new set of noisy weights
  action = dqn.act(torch.randn(6))
  states = torch.randn(4, 6)
  actions = torch.randint(0, 3, (4,))
  returns = torch.randn(4)
  next_states = torch.randn(4, 6)
  nonterminals = torch.ones(4, 1)
  weights = torch.ones(4)
  losses.append(dqn.learn(states, actions, returns, next_states, nonterminals, weights))
online_net = dqn.online_net
last_loss = losses[-1]
