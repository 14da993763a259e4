# label: safe
# why: both in-place updates hit fresh outputs that no backward formula saved (the final linear layer's output and the negated min), so they compute the same losses and gradients as the out-of-place rewrite
# source: https://github.com/facebookresearch/ReAgent/pull/377 (commit 75b64ec1e0de01f399a3e9b2bbbe199ad7d6d0d2)
from typing import Dict

import torch
import torch.nn as nn

torch.manual_seed(0)


class FullyConnectedDQN(nn.Module):
    def __init__(self, state_dim, action_dim, sizes):
        super().__init__()
        layers, dims = [], [state_dim] + sizes
        for d_in, d_out in zip(dims[:-1], dims[1:]):
            layers += [nn.Linear(d_in, d_out), nn.ReLU()]
        layers.append(nn.Linear(dims[-1], action_dim))
        self.fc = nn.Sequential(*layers)

    def forward(self, float_features, possible_actions_mask=None):
        x = self.fc(float_features)
        if possible_actions_mask is not None:
            # subtract huge value from impossible actions to force their probabilities to 0
            x -= (1 - possible_actions_mask.float()) * 1e10
        return x


class SoftmaxActionSampler:
    def log_prob(self, scores, action):
        return (torch.log_softmax(scores, dim=-1) * action).sum(-1)

    def entropy(self, scores):
        p = torch.softmax(scores, dim=-1)
        return -(p * torch.log_softmax(scores, dim=-1)).sum(-1).mean()


def discounted_returns(rewards, gamma):
    returns = torch.zeros_like(rewards)
    running = 0.0
    for t in reversed(range(len(rewards))):
        running = rewards[t] + gamma * running
        returns[t] = running
    return returns


class PPOTrainer:
    def __init__(self, scorer, value_net, gamma=0.9, ppo_epsilon=0.2, entropy_weight=0.01, reward_clip=1e6):
        self.scorer = scorer
        self.value_net = value_net
        self.sampler = SoftmaxActionSampler()
        self.gamma, self.ppo_epsilon = gamma, ppo_epsilon
        self.entropy_weight, self.reward_clip = entropy_weight, reward_clip
        self.value_loss_fn = nn.MSELoss(reduction="mean")

    def _trajectory_to_losses(self, trajectory) -> Dict[str, torch.Tensor]:
        losses = {}
        actions = trajectory["action"]
        rewards = trajectory["reward"].detach()
        scores = self.scorer(trajectory["state"], trajectory["possible_actions_mask"])
        offset_reinforcement = discounted_returns(torch.clamp(rewards, max=self.reward_clip).clone(), self.gamma)
        if self.value_net is not None:
            baselines = self.value_net(trajectory["state"]).squeeze()
            losses["value_net_loss"] = self.value_loss_fn(baselines, offset_reinforcement)
            offset_reinforcement = offset_reinforcement - baselines.detach()
        target_propensity = self.sampler.log_prob(scores, actions).float()
        characteristic_eligibility = torch.exp(target_propensity - trajectory["log_prob"].detach()).float()
        losses["ppo_loss"] = -torch.min(
            offset_reinforcement.float() @ characteristic_eligibility,
            offset_reinforcement.float()
            @ torch.clamp(characteristic_eligibility, 1 - self.ppo_epsilon, 1 + self.ppo_epsilon),
        )
        if self.entropy_weight != 0:
            entropy = self.sampler.entropy(scores)
            # "-" bcs minimizing, not maximizing
            losses["ppo_loss"] -= self.entropy_weight * entropy
        return losses


scorer = FullyConnectedDQN(4, 3, [8])
value_net = nn.Linear(4, 1)
trainer = PPOTrainer(scorer, value_net)
T = 6
trajectory = {
    "state": torch.randn(T, 4),
    "action": nn.functional.one_hot(torch.randint(0, 2, (T,)), 3).float(),
    "reward": torch.randn(T),
    "possible_actions_mask": torch.tensor([1, 1, 0]).repeat(T, 1),
    "log_prob": torch.log(torch.full((T,), 0.5)),
}
losses = trainer._trajectory_to_losses(trajectory)
ppo_loss = losses["ppo_loss"]
value_net_loss = losses["value_net_loss"]
(ppo_loss + value_net_loss).backward()
