# label: hazard silent
# why: update_priorities raises the priorities to the priority exponent with pow_ on the tensor it was handed, which is loss.detach() and shares storage with the agent's loss, so the loss returned to the caller is silently exponentiated.
# source: https://github.com/Kaixhin/Rainbow/commit/e26c8e42a383efff50c65aadb8724eba03d02a22
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ReplayMemory:
    def __init__(self, capacity, priority_exponent):
        self.priority_exponent = priority_exponent
        self.priorities = torch.ones(capacity)
        self.states = torch.randn(capacity, 4)
        self.actions = torch.randint(0, 2, (capacity,))
        self.returns = torch.randn(capacity)
        self.next_states = torch.randn(capacity, 4)
        self.nonterminals = torch.ones(capacity, 1)

    def sample(self, batch_size):
        probs = self.priorities / self.priorities.sum()
        idxs = torch.multinomial(probs, batch_size, replacement=True)
        weights = (1.0 / (len(probs) * probs[idxs]))
        weights = weights / weights.max()
        return idxs, self.states[idxs], self.actions[idxs], self.returns[idxs], self.next_states[idxs], self.nonterminals[idxs], weights

    def update_priorities(self, idxs, priorities):
        priorities.pow_(self.priority_exponent)  # <-- IPL004: priorities is the caller's loss.detach(), which shares storage with loss
        [self.priorities.__setitem__(idx, priority) for idx, priority in zip(idxs, priorities)]


class DQN(nn.Module):
    def __init__(self, action_space, atoms):
        super().__init__()
        self.action_space, self.atoms = action_space, atoms
        self.fc = nn.Linear(4, 16)
        self.fc_z = nn.Linear(16, action_space * atoms)

    def forward(self, x, log=False):
        q = self.fc_z(F.relu(self.fc(x))).view(-1, self.action_space, self.atoms)
        return F.log_softmax(q, dim=2) if log else F.softmax(q, dim=2)


class Agent:
    def __init__(self, action_space=2, atoms=11, Vmin=-5.0, Vmax=5.0, batch_size=6, discount=0.99, n=3):
        self.action_space, self.atoms, self.Vmin, self.Vmax = action_space, atoms, Vmin, Vmax
        self.support = torch.linspace(Vmin, Vmax, atoms)
        self.delta_z = (Vmax - Vmin) / (atoms - 1)
        self.batch_size, self.discount, self.n = batch_size, discount, n
        self.online_net = DQN(action_space, atoms)
        self.target_net = DQN(action_space, atoms)
        self.target_net.load_state_dict(self.online_net.state_dict())
        self.optimiser = torch.optim.Adam(self.online_net.parameters(), lr=1e-3)

    def learn(self, mem):
        idxs, states, actions, returns, next_states, nonterminals, weights = mem.sample(self.batch_size)
        log_ps = self.online_net(states, log=True)
        log_ps_a = log_ps[range(self.batch_size), actions]
        with torch.no_grad():
            pns = self.online_net(next_states)
            dns = self.support.expand_as(pns) * pns
            argmax_indices_ns = dns.sum(2).argmax(1)
            pns = self.target_net(next_states)
            pns_a = pns[range(self.batch_size), argmax_indices_ns]
            Tz = returns.unsqueeze(1) + nonterminals * (self.discount ** self.n) * self.support.unsqueeze(0)
            Tz = Tz.clamp(min=self.Vmin, max=self.Vmax)
            b = (Tz - self.Vmin) / self.delta_z
            l, u = b.floor().to(torch.int64), b.ceil().to(torch.int64)
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
        mem.update_priorities(idxs, loss.detach())
        return loss


mem = ReplayMemory(capacity=20, priority_exponent=0.5)
agent = Agent()
losses = [agent.learn(mem) for _ in range(2)]
loss_log = torch.stack([l.detach().mean() for l in losses])
