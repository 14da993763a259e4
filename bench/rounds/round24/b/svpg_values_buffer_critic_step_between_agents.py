# label: hazard raises no-twin
# why: every particle's value is written into one shared `self.values` buffer, so backpropagating agent 1's critic loss walks the CopySlices chain back into agent 0's critic graph, whose weights agent 0's optimizer.step() already changed in place.
# source: https://github.com/montrealrobotics/active-domainrand/issues/9
import torch
import torch.nn as nn
import torch.optim as optim
from torch.distributions import Normal, kl_divergence

torch.manual_seed(0)
device = torch.device("cpu")


class SVPGParticle(nn.Module):
    def __init__(self, input_dim, output_dim, hidden_dim):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(input_dim, hidden_dim), nn.Tanh(), nn.Linear(hidden_dim, 1))
        self.actor_hidden = nn.Sequential(nn.Linear(input_dim, hidden_dim), nn.Tanh())
        self.mean = nn.Linear(hidden_dim, output_dim)
        self.reset()

    def forward(self, x):
        dist = Normal(self.mean(self.actor_hidden(x)), torch.ones(1))
        value = self.critic(x)
        return dist, value

    def reset(self):
        self.saved_log_probs = []
        self.saved_klds = []


class SVPG:
    def __init__(self, nagents=2, nparams=2, svpg_rollout_length=3, gamma=0.99, temperature=1.0):
        self.nagents = nagents
        self.nparams = nparams
        self.svpg_rollout_length = svpg_rollout_length
        self.gamma = gamma
        self.temperature = temperature
        self.particles = [SVPGParticle(nparams, nparams, 8) for _ in range(nagents)]
        self.optimizers = [optim.Adam(p.parameters(), lr=1e-2) for p in self.particles]
        self.last_states = torch.rand(nagents, nparams, dtype=torch.float64)

    def select_action(self, policy_idx, state):
        state = state.float().unsqueeze(0).to(device)
        policy = self.particles[policy_idx]
        prior_dist = Normal(torch.zeros(1), torch.ones(1))
        dist, value = policy(state)
        action = dist.sample()
        policy.saved_log_probs.append(dist.log_prob(action).sum(-1))
        policy.saved_klds.append(kl_divergence(dist, prior_dist).sum(-1))
        return action.squeeze(0), value

    def compute_returns(self, next_value, rewards, masks, klds):
        R = next_value
        returns = []
        for step in reversed(range(len(rewards))):
            R = self.gamma * masks[step] * R + (rewards[step] - self.temperature * klds[step])
            returns.insert(0, R)
        return returns

    def step(self):
        self.values = torch.zeros((self.nagents, self.svpg_rollout_length, 1)).float().to(device)
        self.masks = torch.ones((self.nagents, self.svpg_rollout_length))
        for i in range(self.nagents):
            self.particles[i].reset()
            current_sim_params = self.last_states[i]
            for t in range(self.svpg_rollout_length):
                action, value = self.select_action(i, current_sim_params)
                self.values[i][t] = value
                current_sim_params = torch.clamp(current_sim_params + 0.1 * action.double(), 0, 1)
            self.last_states[i] = current_sim_params

    def train(self, simulator_rewards):
        for i in range(self.nagents):
            policy_grad_particle = []
            _, next_value = self.select_action(i, self.last_states[i])

            particle_rewards = simulator_rewards[i].float().to(device)
            masks = self.masks[i].float().to(device)

            returns = self.compute_returns(next_value, particle_rewards, masks, self.particles[i].saved_klds)
            returns = torch.cat(returns).detach()
            advantages = returns - self.values[i]

            for log_prob, advantage in zip(self.particles[i].saved_log_probs, advantages):
                policy_grad_particle.append(log_prob * advantage.detach())

            # Compute value loss, update critic
            self.optimizers[i].zero_grad()
            critic_loss = 0.5 * advantages.pow(2).mean()
            critic_loss.backward(retain_graph=True)
            self.optimizers[i].step()  # <-- IPL001

            # Store policy gradients for SVPG update
            self.optimizers[i].zero_grad()
            policy_grad = -torch.cat(policy_grad_particle).mean()
            policy_grad.backward()
        return critic_loss.detach()


def main():
    svpg = SVPG()
    svpg.step()
    simulator_rewards = torch.rand(svpg.nagents, svpg.svpg_rollout_length)
    return svpg.train(simulator_rewards)


result = main()
