# label: hazard silent
# why: TD3's target policy smoothing draws its noise with action.data.normal_(), which overwrites the sampled replay actions in place, so the critic is then regressed on (state, noise) instead of (state, action) without any error.
# source: https://github.com/DLR-RM/stable-baselines3/commit/9cf289b997320168cc026302d0275c6ad270dd8f ("Bug fixes + add evaluate script", pre-fix torchy_baselines/td3/td3.py)
import copy

import torch as th
import torch.nn as nn
import torch.nn.functional as F

th.manual_seed(0)


class ReplayBuffer:
    def __init__(self, buffer_size, state_dim, action_dim):
        self.states = th.randn(buffer_size, state_dim)
        self.actions = th.rand(buffer_size, action_dim) * 2 - 1
        self.next_states = th.randn(buffer_size, state_dim)
        self.dones = th.zeros(buffer_size, 1)
        self.rewards = th.randn(buffer_size, 1)

    def sample(self, batch_size):
        idx = th.randint(0, self.states.shape[0], (batch_size,))
        return (self.states[idx], self.actions[idx], self.next_states[idx], self.dones[idx], self.rewards[idx])


class Actor(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.actor_net = nn.Sequential(nn.Linear(state_dim, 32), nn.ReLU(), nn.Linear(32, action_dim), nn.Tanh())
        self.optimizer = th.optim.Adam(self.parameters(), lr=1e-3)

    def forward(self, state):
        return self.actor_net(state)


class Critic(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.q1_net = nn.Sequential(nn.Linear(state_dim + action_dim, 32), nn.ReLU(), nn.Linear(32, 1))
        self.q2_net = nn.Sequential(nn.Linear(state_dim + action_dim, 32), nn.ReLU(), nn.Linear(32, 1))
        self.optimizer = th.optim.Adam(self.parameters(), lr=1e-3)

    def forward(self, obs, action):
        qvalue_input = th.cat([obs, action], dim=1)
        return self.q1_net(qvalue_input), self.q2_net(qvalue_input)

    def q1_forward(self, obs, action):
        return self.q1_net(th.cat([obs, action], dim=1))


class TD3:
    def __init__(self, state_dim, action_dim):
        self.actor = Actor(state_dim, action_dim)
        self.actor_target = copy.deepcopy(self.actor)
        self.critic = Critic(state_dim, action_dim)
        self.critic_target = copy.deepcopy(self.critic)
        self.replay_buffer = ReplayBuffer(64, state_dim, action_dim)
        self.device = 'cpu'

    def train(self, n_iterations, batch_size=16, discount=0.99, tau=0.005, policy_noise=0.2, noise_clip=0.5, policy_freq=2):
        critic_losses = []
        for it in range(n_iterations):
            state, action, next_state, done, reward = self.replay_buffer.sample(batch_size)

            # Select action according to policy and add clipped noise
            noise = action.data.normal_(0, policy_noise).to(self.device)  # <-- IPL002
            noise = noise.clamp(-noise_clip, noise_clip)
            next_action = (self.actor_target(next_state) + noise).clamp(-1, 1)

            target_q1, target_q2 = self.critic_target(next_state, next_action)
            target_q = th.min(target_q1, target_q2)
            target_q = reward + ((1 - done) * discount * target_q).detach()

            current_q1, current_q2 = self.critic(state, action)
            critic_loss = F.mse_loss(current_q1, target_q) + F.mse_loss(current_q2, target_q)

            self.critic.optimizer.zero_grad()
            critic_loss.backward()
            self.critic.optimizer.step()
            critic_losses.append(critic_loss.detach())

            if it % policy_freq == 0:
                actor_loss = -self.critic.q1_forward(state, self.actor(state)).mean()
                self.actor.optimizer.zero_grad()
                actor_loss.backward()
                self.actor.optimizer.step()

                for param, target_param in zip(self.critic.parameters(), self.critic_target.parameters()):
                    target_param.data.copy_(tau * param.data + (1 - tau) * target_param.data)
                for param, target_param in zip(self.actor.parameters(), self.actor_target.parameters()):
                    target_param.data.copy_(tau * param.data + (1 - tau) * target_param.data)
        return th.stack(critic_losses)


def main():
    model = TD3(state_dim=4, action_dim=2)
    critic_losses = model.train(n_iterations=4)
    return critic_losses, model.critic.q1_net[0].weight.detach().clone()


critic_losses, critic_weight = main()
