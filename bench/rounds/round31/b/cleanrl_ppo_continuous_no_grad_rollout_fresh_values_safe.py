# label: safe
# why: the fix runs the rollout's critic and actor under torch.no_grad() and recomputes `newvalues = vf.forward(...)` inside every update epoch, so each backward walks a fresh graph and `optimizer.step()` never touches weights a pending backward still needs.
# source: https://github.com/vwxyzjn/cleanrl/commit/5a3a092564a9fcf2cb748ca2ad23007989567f2e
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions.normal import Normal

torch.manual_seed(0)


class Args:
    learning_rate = 7e-4
    gamma = 0.99
    vf_coef = 0.25
    ent_coef = 0.01
    max_grad_norm = 0.5
    clip_coef = 0.2
    update_epochs = 3
    episode_length = 12
    total_timesteps = 12


args = Args()
input_shape, output_shape = 3, 1


class PendulumLike:
    """Tiny deterministic stand-in for the gym env of the original script."""

    def reset(self):
        self.state = torch.tensor([0.5, -0.2, 0.1])
        return self.state.clone()

    def step(self, action):
        self.state = 0.9 * self.state + 0.1 * action
        reward = -(self.state ** 2).sum().item()
        return self.state.clone(), reward, False, {}


def preprocess_obs_fn(x):
    # the original stores observations in numpy arrays and converts them here
    return torch.Tensor(x.tolist()).float()


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.fc1 = nn.Linear(input_shape, 120)
        self.fc2 = nn.Linear(120, 84)
        self.mean = nn.Linear(84, output_shape)
        self.logstd = nn.Parameter(torch.zeros(1, output_shape))

    def forward(self, x):
        x = preprocess_obs_fn(x)
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        action_mean = self.mean(x)
        action_logstd = self.logstd.expand_as(action_mean)
        return action_mean, action_logstd

    def get_action(self, x):
        mean, logstd = self.forward(x)
        std = torch.exp(logstd)
        probs = Normal(mean, std)
        action = probs.sample()
        return action, probs.log_prob(action).sum(1)

    def get_logproba(self, x, actions):
        action_mean, action_logstd = self.forward(x)
        action_std = torch.exp(action_logstd)
        dist = Normal(action_mean, action_std)
        return dist.log_prob(actions).sum(1)


class Value(nn.Module):
    def __init__(self):
        super(Value, self).__init__()
        self.fc1 = nn.Linear(input_shape, 64)
        self.fc2 = nn.Linear(64, 1)

    def forward(self, x):
        x = preprocess_obs_fn(x)
        x = torch.tanh(self.fc1(x))
        x = self.fc2(x)
        return x


def main():
    env = PendulumLike()
    pg = Policy()
    vf = Value()
    optimizer = optim.Adam(list(pg.parameters()) + list(vf.parameters()), lr=args.learning_rate)

    global_step = 0
    while global_step < args.total_timesteps:
        next_obs = env.reset()
        actions = torch.zeros((args.episode_length, output_shape))
        rewards = torch.zeros(args.episode_length)
        dones = torch.zeros(args.episode_length)
        obs = torch.zeros((args.episode_length, input_shape))

        # ALGO LOGIC: put other storage logic here
        values = torch.zeros((args.episode_length,))
        logprobs = torch.zeros((args.episode_length,))

        for step in range(args.episode_length):
            global_step += 1
            obs[step] = next_obs.clone()

            # ALGO LOGIC: put action logic here
            with torch.no_grad():
                values[step] = vf.forward(obs[step:step + 1])
                action, logproba = pg.get_action(obs[step:step + 1])
            actions[step] = action.data[0]
            logprobs[step] = logproba.data[0]

            clipped_action = action.data[0].clamp(-2.0, 2.0)
            next_obs, rewards[step], dones[step], _ = env.step(clipped_action)
            if dones[step]:
                break

        # calculate the discounted rewards, or namely, returns
        returns = torch.zeros_like(rewards)
        returns[step] = rewards[step]
        for t in reversed(range(rewards.shape[0] - 1)):
            returns[t] = rewards[t] + args.gamma * returns[t + 1] * (1 - dones[t])
        # advantages are returns - baseline, value estimates in our case
        advantages = returns - values.detach()

        for _ in range(args.update_epochs):
            newlogproba = pg.get_logproba(obs[:step + 1], actions[:step + 1])
            newvalues = vf.forward(obs[:step + 1]).flatten()
            ratio = torch.exp(newlogproba - logprobs[:step + 1])
            surrogate1 = ratio * advantages[:step + 1]
            surrogate2 = ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef) * advantages[:step + 1]
            policy_loss = -torch.mean(torch.min(surrogate1, surrogate2))
            vf_loss = torch.mean((newvalues - returns[:step + 1]).pow(2))
            entropy_loss = torch.mean(torch.exp(newlogproba) * newlogproba)
            total_loss = policy_loss + args.vf_coef * vf_loss + args.ent_coef * entropy_loss
            optimizer.zero_grad()
            total_loss.backward()
            nn.utils.clip_grad_norm_(list(pg.parameters()) + list(vf.parameters()), args.max_grad_norm)
            optimizer.step()

    return vf_loss.detach(), policy_loss.detach(), vf.fc2.weight.detach().clone()


vf_loss, policy_loss, vf_fc2_weight = main()
