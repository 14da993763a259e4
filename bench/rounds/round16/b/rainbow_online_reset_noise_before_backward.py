# label: hazard raises
# why: resampling the online net's noise (copy_ into weight_epsilon/bias_epsilon) after its forward but before loss.backward() overwrites the epsilons that weight_sigma * weight_epsilon saved
# source: https://github.com/Kaixhin/Rainbow/issues/2 (agent.py learn / model.py NoisyLinear; "the noise should be reset before every gradient step")
import math

import torch
from torch import nn, optim
from torch.nn import functional as F

torch.manual_seed(0)


class NoisyLinear(nn.Module):
    def __init__(self, in_features, out_features, std_init=0.5):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.std_init = std_init
        self.weight_mu = nn.Parameter(torch.empty(out_features, in_features))
        self.weight_sigma = nn.Parameter(torch.empty(out_features, in_features))
        self.register_buffer("weight_epsilon", torch.empty(out_features, in_features))
        self.bias_mu = nn.Parameter(torch.empty(out_features))
        self.bias_sigma = nn.Parameter(torch.empty(out_features))
        self.register_buffer("bias_epsilon", torch.empty(out_features))
        self.reset_parameters()
        self.reset_noise()

    def reset_parameters(self):
        mu_range = 1 / math.sqrt(self.in_features)
        self.weight_mu.data.uniform_(-mu_range, mu_range)
        self.weight_sigma.data.fill_(self.std_init / math.sqrt(self.in_features))
        self.bias_mu.data.uniform_(-mu_range, mu_range)
        self.bias_sigma.data.fill_(self.std_init / math.sqrt(self.out_features))

    def _scale_noise(self, size):
        x = torch.randn(size)
        return x.sign().mul_(x.abs().sqrt_())

    def reset_noise(self):
        epsilon_in = self._scale_noise(self.in_features)
        epsilon_out = self._scale_noise(self.out_features)
        self.weight_epsilon.copy_(epsilon_out.ger(epsilon_in))  # <-- IPL001: epsilon saved by weight_sigma * weight_epsilon
        self.bias_epsilon.copy_(epsilon_out)  # <-- IPL001: epsilon saved by bias_sigma * bias_epsilon

    def forward(self, input):
        return F.linear(input, self.weight_mu + self.weight_sigma * self.weight_epsilon,
                        self.bias_mu + self.bias_sigma * self.bias_epsilon)


class DQN(nn.Module):
    def __init__(self, state_dim, action_space, atoms, hidden=8):
        super().__init__()
        self.atoms, self.action_space = atoms, action_space
        self.fc = nn.Linear(state_dim, hidden)
        self.fc_h = NoisyLinear(hidden, hidden)
        self.fc_z = NoisyLinear(hidden, action_space * atoms)

    def forward(self, x, log=False):
        x = F.relu(self.fc(x))
        q = self.fc_z(F.relu(self.fc_h(x))).view(-1, self.action_space, self.atoms)
        return F.log_softmax(q, dim=2) if log else F.softmax(q, dim=2)

    def reset_noise(self):
        for name, module in self.named_children():
            if "fc_" in name:
                module.reset_noise()


class Agent:
    def __init__(self, state_dim=4, action_space=2, atoms=5, v_min=-2.0, v_max=2.0):
        self.atoms, self.v_min, self.v_max = atoms, v_min, v_max
        self.support = torch.linspace(v_min, v_max, atoms)
        self.delta_z = (v_max - v_min) / (atoms - 1)
        self.discount = 0.9
        self.online_net = DQN(state_dim, action_space, atoms)
        self.target_net = DQN(state_dim, action_space, atoms)
        self.target_net.load_state_dict(self.online_net.state_dict())
        self.optimiser = optim.Adam(self.online_net.parameters(), lr=1e-3)

    def learn(self, states, actions, returns, next_states, nonterminals):
        batch_size = states.size(0)
        log_ps = self.online_net(states, log=True)
        log_ps_a = log_ps[range(batch_size), actions]
        with torch.no_grad():
            self.online_net.reset_noise()  # fresh noise for the double-DQN argmax
            pns = self.online_net(next_states)
            dns = self.support.expand_as(pns) * pns
            argmax_indices_ns = dns.sum(2).argmax(1)
            self.target_net.reset_noise()
            pns = self.target_net(next_states)
            pns_a = pns[range(batch_size), argmax_indices_ns]
            Tz = returns.unsqueeze(1) + nonterminals * self.discount * self.support.unsqueeze(0)
            Tz = Tz.clamp(min=self.v_min, max=self.v_max)
            b = (Tz - self.v_min) / self.delta_z
            l, u = b.floor().to(torch.int64), b.ceil().to(torch.int64)
            l[(u > 0) * (l == u)] -= 1
            u[(l < (self.atoms - 1)) * (l == u)] += 1
            m = states.new_zeros(batch_size, self.atoms)
            offset = torch.linspace(0, ((batch_size - 1) * self.atoms), batch_size).unsqueeze(1).expand(batch_size, self.atoms).to(actions)
            m.view(-1).index_add_(0, (l + offset).view(-1), (pns_a * (u.float() - b)).view(-1))
            m.view(-1).index_add_(0, (u + offset).view(-1), (pns_a * (b - l.float())).view(-1))
        loss = -torch.sum(m * log_ps_a, 1)
        self.online_net.zero_grad()
        loss.mean().backward()
        self.optimiser.step()
        return loss.detach()


agent = Agent()
states = torch.randn(3, 4)
next_states = torch.randn(3, 4)
actions = torch.tensor([0, 1, 1])
returns = torch.tensor([1.0, 0.0, -1.0])
nonterminals = torch.tensor([[1.0], [1.0], [0.0]])
loss = agent.learn(states, actions, returns, next_states, nonterminals)
