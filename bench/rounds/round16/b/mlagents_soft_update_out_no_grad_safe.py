# label: safe no-twin
# why: the SAC target network is soft-updated in place (mul_ and torch.add(..., out=)) under torch.no_grad after the critic step, and nothing in a live graph saved the target parameters
# source: https://github.com/Unity-Technologies/ml-agents/pull/4501 (ModelUtils.soft_update)
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ModelUtils:
    @staticmethod
    def soft_update(source: nn.Module, target: nn.Module, tau: float) -> None:
        with torch.no_grad():
            for source_param, target_param in zip(source.parameters(), target.parameters()):
                target_param.data.mul_(1.0 - tau)
                torch.add(target_param.data, source_param.data, alpha=tau, out=target_param.data)


class ValueNetwork(nn.Module):
    def __init__(self, obs_size, hidden=8):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_size, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, obs):
        return self.body(obs).squeeze(-1)


class TorchSACOptimizer:
    def __init__(self, obs_size=4, tau=0.005, gamma=0.99):
        self.value_network = ValueNetwork(obs_size)
        self.target_network = copy.deepcopy(self.value_network)
        ModelUtils.soft_update(self.value_network, self.target_network, 1.0)
        self.tau, self.gamma = tau, gamma
        self.optimizer = torch.optim.Adam(self.value_network.parameters(), lr=1e-2)

    def update(self, batch):
        with torch.no_grad():
            target_values = self.target_network(batch["next_obs"])
            q_backup = batch["rewards"] + (1.0 - batch["done"]) * self.gamma * target_values
        values = self.value_network(batch["obs"])
        value_loss = 0.5 * F.mse_loss(values, q_backup)
        self.optimizer.zero_grad()
        value_loss.backward()
        self.optimizer.step()
        ModelUtils.soft_update(self.value_network, self.target_network, self.tau)
        return value_loss.detach()


sac = TorchSACOptimizer()
losses = []
for _ in range(3):
    batch = {
        "obs": torch.randn(5, 4),
        "next_obs": torch.randn(5, 4),
        "rewards": torch.randn(5),
        "done": torch.tensor([0.0, 0.0, 1.0, 0.0, 0.0]),
    }
    losses.append(sac.update(batch))
losses = torch.stack(losses)
target_weight = sac.target_network.body[0].weight.detach().clone()
