# label: hazard raises no-twin
# why: Critic.learn returns the td_error still attached to the critic graph and steps the critic optimizer; Actor.learn then backpropagates through that td_error into critic weights that were updated in place.
# source: https://github.com/ClownW/Reinforcement-learning-with-PyTorch/issues/1
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
np.random.seed(0)

GAMMA = 0.9
N_F, N_A = 4, 2


class ActorNet(nn.Module):
    def __init__(self, n_features, n_actions):
        super().__init__()
        self.l1 = nn.Linear(n_features, 20)
        self.acts_prob = nn.Linear(20, n_actions)

    def forward(self, x):
        x = F.relu(self.l1(x))
        return F.softmax(self.acts_prob(x), dim=1)


class CriticNet(nn.Module):
    def __init__(self, n_features):
        super().__init__()
        self.l1 = nn.Linear(n_features, 20)
        self.v = nn.Linear(20, 1)

    def forward(self, x):
        return self.v(F.relu(self.l1(x)))


class Actor(object):
    def __init__(self, n_features, n_actions, lr=0.001):
        self.actor_net = ActorNet(n_features, n_actions)
        self.optimizer = torch.optim.Adam(self.actor_net.parameters(), lr=lr)

    def learn(self, s, a, td):
        s = torch.Tensor(s[np.newaxis, :])
        acts_prob = self.actor_net(s)
        log_prob = torch.log(acts_prob[0, a])
        exp_v = torch.mean(log_prob * td)
        loss = -exp_v
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return exp_v


class Critic(object):
    def __init__(self, n_features, lr=0.01):
        self.critic_net = CriticNet(n_features)
        self.optimizer = torch.optim.Adam(self.critic_net.parameters(), lr=lr)

    def learn(self, s, r, s_):
        s, s_ = torch.Tensor(s[np.newaxis, :]), torch.Tensor(s_[np.newaxis, :])
        v, v_ = self.critic_net(s), self.critic_net(s_)
        td_error = r + GAMMA * v_ - v
        loss = td_error ** 2
        self.optimizer.zero_grad()
        loss.backward(retain_graph=True)
        self.optimizer.step()  # <-- IPL001: critic weights change in place while td_error (returned below) still needs them
        return td_error


actor = Actor(n_features=N_F, n_actions=N_A)
critic = Critic(n_features=N_F)

s = np.random.randn(N_F).astype(np.float32)
for t in range(2):
    a = int(np.random.randint(N_A))
    s_ = np.random.randn(N_F).astype(np.float32)
    r = 1.0
    td_error = critic.learn(s, r, s_)
    actor.learn(s, a, td_error)
    s = s_
