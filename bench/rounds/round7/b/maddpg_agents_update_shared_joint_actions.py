# label: hazard raises no-twin
# why: MADDPG.learn builds the joint actions of all agents once, then inside the per-agent loop steps each agent's actor optimizer and soft-updates its target networks in place, so the next agent's backward through the shared joint actions meets modified weights.
# source: https://github.com/philtabor/Multi-Agent-Deep-Deterministic-Policy-Gradients/issues/2
import torch as T
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

T.manual_seed(0)


class CriticNetwork(nn.Module):
    def __init__(self, beta, input_dims, fc1_dims, fc2_dims, n_agents, n_actions):
        super(CriticNetwork, self).__init__()
        self.fc1 = nn.Linear(input_dims + n_agents * n_actions, fc1_dims)
        self.fc2 = nn.Linear(fc1_dims, fc2_dims)
        self.q = nn.Linear(fc2_dims, 1)
        self.optimizer = optim.Adam(self.parameters(), lr=beta)

    def forward(self, state, action):
        x = F.relu(self.fc1(T.cat([state, action], dim=1)))
        x = F.relu(self.fc2(x))
        return self.q(x)


class ActorNetwork(nn.Module):
    def __init__(self, alpha, input_dims, fc1_dims, fc2_dims, n_actions):
        super(ActorNetwork, self).__init__()
        self.fc1 = nn.Linear(input_dims, fc1_dims)
        self.fc2 = nn.Linear(fc1_dims, fc2_dims)
        self.pi = nn.Linear(fc2_dims, n_actions)
        self.optimizer = optim.Adam(self.parameters(), lr=alpha)

    def forward(self, state):
        x = F.relu(self.fc1(state))
        x = F.relu(self.fc2(x))
        return T.softmax(self.pi(x), dim=1)


class Agent:
    def __init__(self, actor_dims, critic_dims, n_actions, n_agents, agent_idx, alpha=0.01, beta=0.01, fc1=8,
                 fc2=8, gamma=0.95, tau=0.01):
        self.gamma = gamma
        self.tau = tau
        self.actor = ActorNetwork(alpha, actor_dims, fc1, fc2, n_actions)
        self.critic = CriticNetwork(beta, critic_dims, fc1, fc2, n_agents, n_actions)
        self.target_actor = ActorNetwork(alpha, actor_dims, fc1, fc2, n_actions)
        self.target_critic = CriticNetwork(beta, critic_dims, fc1, fc2, n_agents, n_actions)
        self.update_network_parameters(tau=1)

    def update_network_parameters(self, tau=None):
        if tau is None:
            tau = self.tau
        target_actor_state_dict = dict(self.target_actor.named_parameters())
        actor_state_dict = dict(self.actor.named_parameters())
        for name in actor_state_dict:
            actor_state_dict[name] = tau * actor_state_dict[name].clone() + (1 - tau) * target_actor_state_dict[name].clone()
        self.target_actor.load_state_dict(actor_state_dict)  # <-- IPL001: copies into target_actor weights saved by new_actions

        target_critic_state_dict = dict(self.target_critic.named_parameters())
        critic_state_dict = dict(self.critic.named_parameters())
        for name in critic_state_dict:
            critic_state_dict[name] = tau * critic_state_dict[name].clone() + (1 - tau) * target_critic_state_dict[name].clone()
        self.target_critic.load_state_dict(critic_state_dict)


class MADDPG:
    def __init__(self, actor_dims, critic_dims, n_agents, n_actions):
        self.agents = [Agent(actor_dims[i], critic_dims, n_actions, n_agents, i) for i in range(n_agents)]
        self.n_agents = n_agents

    def learn(self, sample):
        actor_states, states, actions, rewards, actor_new_states, states_, dones = sample
        all_agents_new_actions = []
        all_agents_new_mu_actions = []
        old_agents_actions = []
        for agent_idx, agent in enumerate(self.agents):
            new_pi = agent.target_actor.forward(actor_new_states[agent_idx])
            all_agents_new_actions.append(new_pi)
            pi = agent.actor.forward(actor_states[agent_idx])
            all_agents_new_mu_actions.append(pi)
            old_agents_actions.append(actions[agent_idx])

        new_actions = T.cat([acts for acts in all_agents_new_actions], dim=1)
        mu = T.cat([acts for acts in all_agents_new_mu_actions], dim=1)
        old_actions = T.cat([acts for acts in old_agents_actions], dim=1)

        for agent_idx, agent in enumerate(self.agents):
            critic_value_ = agent.target_critic.forward(states_, new_actions).flatten()
            critic_value_[dones[:, 0]] = 0.0
            critic_value = agent.critic.forward(states, old_actions).flatten()

            target = rewards[:, agent_idx] + agent.gamma * critic_value_
            critic_loss = F.mse_loss(target, critic_value)
            agent.critic.optimizer.zero_grad()
            critic_loss.backward(retain_graph=True)
            agent.critic.optimizer.step()

            actor_loss = agent.critic.forward(states, mu).flatten()
            actor_loss = -T.mean(actor_loss)
            agent.actor.optimizer.zero_grad()
            actor_loss.backward(retain_graph=True)
            agent.actor.optimizer.step()  # <-- IPL001: updates this actor while mu (used by later agents) saved its weights

            agent.update_network_parameters()


n_agents, n_actions, obs_dim, batch = 2, 2, 3, 6
maddpg_agents = MADDPG([obs_dim] * n_agents, obs_dim * n_agents, n_agents, n_actions)
sample = (
    [T.randn(batch, obs_dim) for _ in range(n_agents)],
    T.randn(batch, obs_dim * n_agents),
    [T.rand(batch, n_actions) for _ in range(n_agents)],
    T.randn(batch, n_agents),
    [T.randn(batch, obs_dim) for _ in range(n_agents)],
    T.randn(batch, obs_dim * n_agents),
    T.zeros(batch, n_agents, dtype=T.bool),
)
maddpg_agents.learn(sample)
