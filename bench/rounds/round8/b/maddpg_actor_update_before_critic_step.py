# label: safe
# why: the actor backward runs before any optimizer step; critic_loss only depends on critic weights, which are untouched by the actor step
# source: https://github.com/starry-sky6688/MADDPG/issues/27
import torch
import torch.nn as nn

torch.manual_seed(0)


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim, 16)
        self.action_out = nn.Linear(16, act_dim)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        return torch.tanh(self.action_out(x))


class Critic(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim + act_dim, 16)
        self.q_out = nn.Linear(16, 1)

    def forward(self, state, action):
        x = torch.cat([state, action], dim=1)
        x = torch.relu(self.fc1(x))
        return self.q_out(x)


class MADDPG:
    def __init__(self):
        self.actor_network = Actor(4, 2)
        self.critic_network = Critic(4, 2)
        self.critic_target_network = Critic(4, 2)
        self.critic_target_network.load_state_dict(self.critic_network.state_dict())
        self.actor_optim = torch.optim.Adam(self.actor_network.parameters(), lr=1e-3)
        self.critic_optim = torch.optim.Adam(self.critic_network.parameters(), lr=1e-3)

    def train(self, transitions):
        o, u, r, o_next = transitions['o'], transitions['u'], transitions['r'], transitions['o_next']
        with torch.no_grad():
            u_next = self.actor_network(o_next)
            q_next = self.critic_target_network(o_next, u_next)
            target_q = r + 0.95 * q_next
        q_value = self.critic_network(o, u)
        critic_loss = (target_q - q_value).pow(2).mean()

        u_pred = self.actor_network(o)
        actor_loss = -self.critic_network(o, u_pred).mean()

        # maintainer's suggestion: run the actor update first, the critic update after it
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()

        self.critic_optim.zero_grad()
        critic_loss.backward()
        self.critic_optim.step()
        return critic_loss.detach(), actor_loss.detach()


agent = MADDPG()
transitions = {
    'o': torch.randn(8, 4),
    'u': torch.randn(8, 2),
    'r': torch.randn(8, 1),
    'o_next': torch.randn(8, 4),
}
critic_loss, actor_loss = agent.train(transitions)
