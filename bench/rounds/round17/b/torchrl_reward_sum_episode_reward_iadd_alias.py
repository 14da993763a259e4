# label: hazard silent
# why: RewardSum accumulates episode_reward with += on the tensor that step_mdp carries over from the previous step, so every tensordict already stored in the rollout points at the same tensor and ends up showing the final return.
# source: https://github.com/pytorch/rl/commit/2d1723cff538870910242ed50a878f0798edbd8b
import torch
import torch.nn as nn

torch.manual_seed(0)


class Transform(nn.Module):
    def __init__(self, in_keys, out_keys):
        super().__init__()
        self.in_keys, self.out_keys = in_keys, out_keys


class RewardSum(Transform):
    inplace = True

    def __init__(self, in_keys=None, out_keys=None):
        if in_keys is None:
            in_keys = ["reward"]
        out_keys = [f"episode_{in_key}" for in_key in in_keys]
        super().__init__(in_keys=in_keys, out_keys=out_keys)

    def _call(self, tensordict):
        for in_key in self.in_keys:
            if in_key not in tensordict.keys():
                return tensordict
        for in_key, out_key in zip(self.in_keys, self.out_keys):
            reward = tensordict.get(in_key)
            if out_key not in tensordict.keys():
                tensordict[out_key] = torch.zeros(*reward.shape[:-1], 1, dtype=reward.dtype)
            tensordict[out_key] += reward  # <-- IPL002: the episode_reward tensor is shared with tensordicts already stored in the rollout
        return tensordict


def step_mdp(tensordict, keep_keys=("observation", "episode_reward")):
    return {key: tensordict[key] for key in keep_keys if key in tensordict}


class ToyEnv:
    def step(self, tensordict):
        action = tensordict["action"]
        obs = tensordict["observation"] + action
        out = dict(tensordict)
        out["observation"] = obs
        out["reward"] = -obs.pow(2).sum(-1, keepdim=True)
        return out


policy = nn.Linear(2, 2)
env = ToyEnv()
reward_sum = RewardSum()
td = {"observation": torch.randn(3, 2)}
rollout = []
for t in range(4):
    with torch.no_grad():
        td["action"] = torch.tanh(policy(td["observation"]))
    td = env.step(td)
    td = reward_sum._call(td)
    rollout.append(td)
    td = step_mdp(td)
episode_rewards = torch.stack([step["episode_reward"] for step in rollout])
step_rewards = torch.stack([step["reward"] for step in rollout])
