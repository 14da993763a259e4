# label: hazard silent
# why: RewardScaling rescales the reward tensor it is handed with mul_/add_, so the collector's own reference to the raw reward (used for the episode return) is silently rescaled as well.
# source: https://github.com/pytorch/rl/commit/09b28d34de8aad9c408b58c48739a38badad6dc6
import torch
import torch.nn as nn

torch.manual_seed(0)


class Transform(nn.Module):
    def __init__(self, in_keys):
        super().__init__()
        self.in_keys = in_keys

    def forward(self, tensordict):
        for key in self.in_keys:
            tensordict[key] = self._apply_transform(tensordict[key])
        return tensordict


class RewardScaling(Transform):
    def __init__(self, loc, scale, in_keys=None):
        if in_keys is None:
            in_keys = ["reward"]
        super().__init__(in_keys=in_keys)
        if not isinstance(loc, torch.Tensor):
            loc = torch.tensor(loc)
        if not isinstance(scale, torch.Tensor):
            scale = torch.tensor(scale)
        self.register_buffer("loc", loc)
        self.register_buffer("scale", scale.clamp_min(1e-6))

    def _apply_transform(self, reward):
        reward.mul_(self.scale).add_(self.loc)  # <-- IPL004: rescales the caller's reward tensor in place
        return reward


class ToyEnv:
    def step(self, action):
        obs = torch.randn(2, 3)
        reward = (obs.sum(-1, keepdim=True) + action).abs()
        return {"observation": obs, "reward": reward}


policy = nn.Linear(3, 1)
env = ToyEnv()
transform = RewardScaling(loc=-1.0, scale=0.5)
episode_return = torch.zeros(2, 1)
scaled_rewards = []
obs = torch.randn(2, 3)
for t in range(4):
    with torch.no_grad():
        action = policy(obs)
    step_td = env.step(action)
    raw_reward = step_td["reward"]
    transformed = transform(dict(step_td))
    scaled_rewards.append(transformed["reward"])
    episode_return += raw_reward
    obs = transformed["observation"]
value_loss = (policy(obs) - torch.stack(scaled_rewards).mean(0)).pow(2).mean()
value_loss.backward()
