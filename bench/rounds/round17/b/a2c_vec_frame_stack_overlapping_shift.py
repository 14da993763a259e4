# label: hazard raises no-twin
# why: the frame stack shifts its buffer with an in-place slice assignment whose source is an overlapping view of the same buffer, which torch refuses because the write would clobber values it still has to read.
# source: https://github.com/ikostrikov/pytorch-a2c-ppo-acktr-gail/commit/84a7582477fb0d5c82ad6d850fe476829dddd2e1
import torch
import torch.nn as nn

torch.manual_seed(0)


class DummyVecEnv:
    def __init__(self, num_envs, obs_shape):
        self.num_envs, self.obs_shape = num_envs, obs_shape
        self.t = 0

    def reset(self):
        return torch.rand((self.num_envs,) + self.obs_shape)

    def step_wait(self):
        self.t += 1
        obs = torch.rand((self.num_envs,) + self.obs_shape)
        rews = torch.rand(self.num_envs, 1)
        news = [self.t % 3 == 0 and i == 0 for i in range(self.num_envs)]
        return obs, rews, news, [{} for _ in range(self.num_envs)]


class VecPyTorchFrameStack:
    def __init__(self, venv, nstack):
        self.venv = venv
        self.nstack = nstack
        self.shape_dim0 = venv.obs_shape[0]
        self.stacked_obs = torch.zeros((venv.num_envs, venv.obs_shape[0] * nstack) + venv.obs_shape[1:])

    def step_wait(self):
        obs, rews, news, infos = self.venv.step_wait()
        self.stacked_obs[:, :-self.shape_dim0] = self.stacked_obs[:, self.shape_dim0:]  # <-- IPL002: source and destination overlap in the same buffer
        for (i, new) in enumerate(news):
            if new:
                self.stacked_obs[i] = 0
        self.stacked_obs[:, -self.shape_dim0:] = obs
        return self.stacked_obs, rews, news, infos

    def reset(self):
        obs = self.venv.reset()
        self.stacked_obs.zero_()
        self.stacked_obs[:, -self.shape_dim0:] = obs
        return self.stacked_obs


class Policy(nn.Module):
    def __init__(self, in_dim, n_actions):
        super().__init__()
        self.base = nn.Sequential(nn.Flatten(), nn.Linear(in_dim, 16), nn.ReLU())
        self.actor = nn.Linear(16, n_actions)
        self.critic = nn.Linear(16, 1)

    def act(self, obs):
        h = self.base(obs)
        dist = torch.distributions.Categorical(logits=self.actor(h))
        action = dist.sample()
        return self.critic(h), action, dist.log_prob(action)


num_envs, nstack, num_steps = 1, 4, 5
envs = VecPyTorchFrameStack(DummyVecEnv(num_envs, (1, 3, 3)), nstack)
actor_critic = Policy(nstack * 9, 3)
obs_buffer = torch.zeros(num_steps + 1, num_envs, nstack, 3, 3)
actions = torch.zeros(num_steps, num_envs, dtype=torch.long)
rewards = torch.zeros(num_steps, num_envs, 1)
obs_buffer[0].copy_(envs.reset())
for step in range(num_steps):
    with torch.no_grad():
        value, action, action_log_prob = actor_critic.act(obs_buffer[step])
    obs, reward, done, infos = envs.step_wait()
    obs_buffer[step + 1].copy_(obs)
    actions[step].copy_(action)
    rewards[step].copy_(reward)
h = actor_critic.base(obs_buffer[:-1].view(-1, nstack, 3, 3))
values = actor_critic.critic(h).view(num_steps, num_envs, 1)
dist = torch.distributions.Categorical(logits=actor_critic.actor(h))
log_probs = dist.log_prob(actions.view(-1)).view(num_steps, num_envs, 1)
returns = rewards.flip(0).cumsum(0).flip(0)
advantages = returns - values
loss = -(advantages.detach() * log_probs).mean() + advantages.pow(2).mean()
loss.backward()
