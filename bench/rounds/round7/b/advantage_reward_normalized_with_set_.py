# label: hazard raises
# why: TD0Estimate normalizes the rewards and writes them back with TensorDict.set_, an in-place copy into the reward tensor that the differentiable reward model's tanh saved for backward.
# source: https://github.com/pytorch/rl/pull/322
import torch
import torch.nn as nn

torch.manual_seed(0)


class TensorDict:
    """Minimal stand-in for tensordict.TensorDict: set() rebinds, set_() writes in place."""

    def __init__(self, source):
        self._tensordict = dict(source)

    def get(self, key):
        return self._tensordict[key]

    def set(self, key, value):
        self._tensordict[key] = value
        return self

    def set_(self, key, value):
        self._tensordict[key].copy_(value)  # <-- IPL001: overwrites the stored reward tensor in place
        return self


class RewardModel(nn.Module):
    def __init__(self, obs_dim):
        super().__init__()
        self.net = nn.Linear(obs_dim, 1)

    def forward(self, obs):
        return torch.tanh(self.net(obs))


class TD0Estimate:
    def __init__(self, gamma, value_network, average_rewards=True):
        self.gamma = gamma
        self.value_network = value_network
        self.average_rewards = average_rewards

    def __call__(self, tensordict):
        reward = tensordict.get("reward")
        if self.average_rewards:
            reward = reward - reward.mean()
            reward = reward / reward.std().clamp_min(1e-4)
            tensordict.set_("reward", reward)

        gamma = self.gamma
        with torch.no_grad():
            next_value = self.value_network(tensordict.get("next_observation"))
        value = self.value_network(tensordict.get("observation"))
        done = tensordict.get("done").float()
        advantage = reward + gamma * (1 - done) * next_value - value
        tensordict.set("advantage", advantage)
        return tensordict


obs_dim = 5
reward_model = RewardModel(obs_dim)
value_network = nn.Linear(obs_dim, 1)
observation = torch.randn(10, obs_dim)
next_observation = torch.randn(10, obs_dim)
td = TensorDict({
    "observation": observation,
    "next_observation": next_observation,
    "done": torch.zeros(10, 1, dtype=torch.bool),
    "reward": reward_model(next_observation),
})
estimate = TD0Estimate(0.9, value_network)
td = estimate(td)
loss = td.get("advantage").pow(2).mean() + td.get("reward").sum()
loss.backward()
