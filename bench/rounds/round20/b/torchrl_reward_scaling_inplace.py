# label: hazard silent
# why: RewardScaling._apply_transform scales the incoming reward with `reward.mul_(scale).add_(loc)`, i.e. in the very tensor the caller's rollout tensordict still holds, so the logged raw episode return silently becomes the scaled one.
# source: https://github.com/pytorch/rl/pull/682 (commit a554ff75b23edaaae7bf3e74e3a6e609cbba6b6b "Address in-place scaling of reward")
from typing import Optional, Sequence, Union

import torch
import torch.nn as nn

torch.manual_seed(0)


class Transform(nn.Module):
    inplace = True

    def __init__(self, in_keys: Sequence[str]):
        super().__init__()
        self.in_keys = in_keys

    def _apply_transform(self, obs: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _call(self, tensordict):
        for key in self.in_keys:
            tensordict[key] = self._apply_transform(tensordict[key])
        return tensordict

    def forward(self, tensordict):
        return self._call(tensordict)


class RewardScaling(Transform):
    inplace = True

    def __init__(
        self,
        loc: Union[float, torch.Tensor],
        scale: Union[float, torch.Tensor],
        in_keys: Optional[Sequence[str]] = None,
        standard_normal: bool = False,
    ):
        if in_keys is None:
            in_keys = ["reward"]
        super().__init__(in_keys=in_keys)
        self.standard_normal = standard_normal
        if not isinstance(loc, torch.Tensor):
            loc = torch.tensor(loc)
        if not isinstance(scale, torch.Tensor):
            scale = torch.tensor(scale)
        self.register_buffer("loc", loc)
        self.register_buffer("scale", scale.clamp_min(1e-6))

    def _apply_transform(self, reward: torch.Tensor) -> torch.Tensor:
        if self.standard_normal:
            loc = self.loc
            scale = self.scale
            return (reward - loc) / scale
        else:
            reward.mul_(self.scale).add_(self.loc)  # <-- IPL004
            return reward


def rollout(policy, n_steps=8):
    obs = torch.randn(4)
    steps = []
    for _ in range(n_steps):
        action = policy(obs).tanh()
        next_obs = obs + 0.1 * action.detach()
        reward = -(next_obs ** 2).sum(-1, keepdim=True)
        steps.append({"observation": obs, "action": action.detach(), "reward": reward, "next_observation": next_obs})
        obs = next_obs
    return {k: torch.stack([s[k] for s in steps]) for k in steps[0]}


def main():
    policy = nn.Linear(4, 4)
    value_net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
    reward_scaling = RewardScaling(loc=0.0, scale=0.1)

    data = rollout(policy)
    train_td = reward_scaling(dict(data))  # shallow copy: same tensors as `data`

    # logging uses the raw rollout
    episode_return = data["reward"].sum()

    # TD(0) critic update on the scaled reward
    with torch.no_grad():
        target = train_td["reward"] + 0.99 * value_net(train_td["next_observation"])
    value_loss = (value_net(train_td["observation"]) - target).pow(2).mean()
    value_loss.backward()
    return episode_return, value_loss.detach(), value_net[0].weight.grad


episode_return, value_loss, value_grad = main()
