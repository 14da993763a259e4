# label: hazard raises no-twin
# why: the combined PPO loss is backpropagated with retain_graph=True, critic_optim.step() then updates the critic weights in place, and the second loss.backward() for the actor runs back through the critic's saved weights.
# source: https://github.com/reinforcement-learning-kr/lets-do-irl/issues/9
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
np.random.seed(0)


class Actor(nn.Module):
    def __init__(self, num_inputs, num_outputs, hidden_size=16):
        super().__init__()
        self.fc1 = nn.Linear(num_inputs, hidden_size)
        self.fc2 = nn.Linear(hidden_size, hidden_size)
        self.fc3 = nn.Linear(hidden_size, num_outputs)

    def forward(self, x):
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        mu = self.fc3(x)
        logstd = torch.zeros_like(mu)
        return mu, torch.exp(logstd)


class Critic(nn.Module):
    def __init__(self, num_inputs, hidden_size=16):
        super().__init__()
        self.fc1 = nn.Linear(num_inputs, hidden_size)
        self.fc2 = nn.Linear(hidden_size, hidden_size)
        self.fc3 = nn.Linear(hidden_size, 1)

    def forward(self, x):
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        return self.fc3(x)


class VDB(nn.Module):
    def __init__(self, num_inputs, hidden_size=16, z_size=4):
        super().__init__()
        self.fc1 = nn.Linear(num_inputs, hidden_size)
        self.fc2 = nn.Linear(hidden_size, z_size)
        self.fc3 = nn.Linear(z_size, 1)

    def forward(self, x):
        mu = self.fc2(torch.tanh(self.fc1(x)))
        return torch.sigmoid(self.fc3(mu)), mu


def log_prob_density(x, mu, std):
    log_prob = -(x - mu).pow(2) / (2 * std.pow(2)) - 0.5 * np.log(2 * np.pi) - torch.log(std)
    return log_prob.sum(1, keepdim=True)


def get_reward(vdb, state, action):
    with torch.no_grad():
        prob, _ = vdb(torch.cat([state, action], dim=1))
    return -torch.log(prob + 1e-8)


def train_actor_critic(actor, critic, memory, actor_optim, critic_optim, clip_param=0.2, batch_size=4):
    states, actions, rewards = memory
    old_values = critic(states).detach()
    returns = rewards + 0.99 * old_values
    advants = (returns - old_values)
    mu, std = actor(states)
    old_policy = log_prob_density(actions, mu, std).detach()
    criterion = nn.MSELoss()
    n = len(states)
    arr = np.arange(n)
    np.random.shuffle(arr)
    for i in range(n // batch_size):
        batch_index = torch.LongTensor(arr[batch_size * i: batch_size * (i + 1)])
        inputs = states[batch_index]
        values = critic(inputs)
        critic_loss = criterion(values, returns[batch_index])
        mu, std = actor(inputs)
        new_policy = log_prob_density(actions[batch_index], mu, std)
        ratio = torch.exp(new_policy - old_policy[batch_index])
        surrogate = ratio * advants[batch_index]
        clipped = torch.clamp(ratio, 1.0 - clip_param, 1.0 + clip_param) * advants[batch_index]
        actor_loss = -torch.min(surrogate, clipped).mean()
        loss = actor_loss + 0.5 * critic_loss
        critic_optim.zero_grad()
        loss.backward(retain_graph=True)
        critic_optim.step()  # <-- IPL001: updates critic weights still saved by the retained graph of `loss`
        actor_optim.zero_grad()
        loss.backward()
        actor_optim.step()
    return loss.detach()


actor, critic, vdb = Actor(3, 2), Critic(3), VDB(5)
actor_optim = torch.optim.Adam(actor.parameters(), lr=3e-4)
critic_optim = torch.optim.Adam(critic.parameters(), lr=3e-4)
states = torch.randn(8, 3)
actions = torch.randn(8, 2)
rewards = get_reward(vdb, states, actions)
last_loss = train_actor_critic(actor, critic, (states, actions, rewards), actor_optim, critic_optim)
