# label: hazard raises no-twin
# why: the actor loss is built through critic_local before critic_optimizer.step() updates the critic weights in place, so actor_loss.backward() finds the critic weights at a newer version.
# source: https://github.com/QasimWani/RL-Unity/issues/5
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


class Actor(nn.Module):
    def __init__(self, state_size, action_size, fc1_units=16):
        super().__init__()
        self.fc1 = nn.Linear(state_size, fc1_units)
        self.fc2 = nn.Linear(fc1_units, action_size)

    def forward(self, state):
        return torch.tanh(self.fc2(F.relu(self.fc1(state))))


class Critic(nn.Module):
    def __init__(self, state_size, action_size, fcs1_units=16, fc2_units=8):
        super().__init__()
        self.fcs1 = nn.Linear(state_size, fcs1_units)
        self.fc2 = nn.Linear(fcs1_units + action_size, fc2_units)
        self.fc3 = nn.Linear(fc2_units, 1)

    def forward(self, state, action):
        xs = F.relu(self.fcs1(state))
        x = torch.cat((xs, action), dim=1)
        return self.fc3(F.relu(self.fc2(x)))


class Agent:
    def __init__(self, state_size, action_size, gamma=0.99):
        self.gamma = gamma
        self.actor_local = Actor(state_size, action_size)
        self.actor_target = Actor(state_size, action_size)
        self.actor_optimizer = optim.Adam(self.actor_local.parameters(), lr=1e-3)
        self.critic_local = Critic(state_size, action_size)
        self.critic_target = Critic(state_size, action_size)
        self.critic_optimizer = optim.Adam(self.critic_local.parameters(), lr=1e-3)

    def learn(self, experiences):
        states, actions, rewards, next_states, dones = experiences
        actions_next = self.actor_target(next_states)
        Q_targets_next = self.critic_target(next_states, actions_next)
        Q_targets = rewards + (self.gamma * Q_targets_next * (1 - dones))
        Q_expected = self.critic_local(states, actions)
        critic_loss = F.mse_loss(Q_expected, Q_targets.detach())

        actions_pred = self.actor_local(states)
        actor_loss = -self.critic_local(states, actions_pred).mean()

        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()  # <-- IPL001: updates critic weights that actor_loss's graph saved

        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        self.actor_optimizer.step()
        return critic_loss.detach(), actor_loss.detach()


agent = Agent(state_size=4, action_size=2)
batch = (torch.randn(8, 4), torch.rand(8, 2) * 2 - 1, torch.randn(8, 1), torch.randn(8, 4), torch.zeros(8, 1))
critic_loss, actor_loss = agent.learn(batch)
