# label: hazard raises no-twin
# why: the network state is fed from one time step to the next without detaching, so after each agent's optimizer.step() the next backward walks back into a graph whose saved weights were updated in place.
# source: https://github.com/FazelYU/Adaptive-Navigation/issues/41
import torch
import torch.nn as nn

torch.manual_seed(0)


class AgentQNet(nn.Module):
    def __init__(self, obs_dim, state_dim, n_actions):
        super().__init__()
        self.encoder = nn.Linear(obs_dim + state_dim, state_dim)
        self.q_head = nn.Linear(state_dim, n_actions)

    def forward(self, obs, net_state):
        new_state = torch.tanh(self.encoder(torch.cat([obs, net_state], dim=-1)))
        return self.q_head(new_state), new_state


class Agent:
    def __init__(self, obs_dim, state_dim, n_actions, gamma=0.9):
        self.q = AgentQNet(obs_dim, state_dim, n_actions)
        self.optimizer = torch.optim.SGD(self.q.parameters(), lr=0.05)
        self.gamma = gamma

    def loss(self, q_values, action, reward, next_q):
        target = reward + self.gamma * next_q.max(dim=-1).values.detach()
        return (q_values.gather(-1, action.unsqueeze(-1)).squeeze(-1) - target).pow(2).mean()


n_agents, obs_dim, state_dim, n_actions = 2, 3, 4, 2
agents = [Agent(obs_dim, state_dim, n_actions) for _ in range(n_agents)]
net_state = torch.zeros(1, state_dim)
losses = []
for step in range(3):
    obs = torch.randn(n_agents, 1, obs_dim)
    step_losses = []
    for i, agent in enumerate(agents):
        q_values, net_state = agent.q(obs[i], net_state)
        next_q, _ = agent.q(torch.randn(1, obs_dim), net_state)
        action = q_values.argmax(dim=-1)
        step_losses.append(agent.loss(q_values, action, torch.rand(1), next_q))
    for agent, loss in zip(agents, step_losses):
        agent.optimizer.zero_grad()
        loss.backward(retain_graph=True)
    for agent in agents:
        agent.optimizer.step()  # <-- IPL001: weights saved by the graph that net_state keeps alive for the next step
    losses.append(sum(step_losses).detach())
total_loss = torch.stack(losses)
