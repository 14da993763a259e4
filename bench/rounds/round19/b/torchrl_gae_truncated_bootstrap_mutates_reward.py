# label: hazard silent
# why: reward is fetched from the batch dict and `reward += gamma * value * truncated` writes the bootstrap into the stored reward, so recomputing advantages each PPO epoch adds it again and again
# source: https://github.com/pytorch/rl/pull/3748 (fixed in commit 126c628a08c6f2fbe16f1123acfa37abb596e329)
import torch
import torch.nn as nn

torch.manual_seed(0)


def generalized_advantage_estimate(gamma, lmbda, state_value, next_state_value, reward, done):
    not_done = (~done).float()
    T = reward.shape[0]
    advantage = torch.zeros_like(reward)
    gae = torch.zeros_like(reward[0])
    for t in reversed(range(T)):
        delta = reward[t] + gamma * next_state_value[t] * not_done[t] - state_value[t]
        gae = delta + gamma * lmbda * not_done[t] * gae
        advantage[t] = gae
    return advantage, advantage + state_value


class GAE:
    def __init__(self, gamma, lmbda, value_network, auto_reset_env=True):
        self.gamma = gamma
        self.lmbda = lmbda
        self.value_network = value_network
        self.auto_reset_env = auto_reset_env

    def __call__(self, tensordict):
        reward = tensordict[("next", "reward")]
        gamma = self.gamma
        with torch.no_grad():
            value = self.value_network(tensordict["observation"])
            next_value = self.value_network(tensordict[("next", "observation")])
        done = tensordict[("next", "done")]
        if self.auto_reset_env:
            truncated = tensordict[("next", "truncated")]
            if truncated.any():
                reward += gamma * value * truncated  # <-- IPL004: writes into the batch's stored reward
        adv, value_target = generalized_advantage_estimate(gamma, self.lmbda, value, next_value, reward, done)
        tensordict["advantage"] = adv
        tensordict["value_target"] = value_target
        return tensordict


T = 6
value_net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
policy = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
optim = torch.optim.Adam(list(policy.parameters()) + list(value_net.parameters()), lr=1e-2)
truncated = torch.zeros(T, 1, dtype=torch.bool)
truncated[2] = True
data = {
    "observation": torch.randn(T, 3),
    "action": torch.randint(0, 2, (T,)),
    ("next", "observation"): torch.randn(T, 3),
    ("next", "reward"): torch.rand(T, 1),
    ("next", "done"): truncated.clone(),
    ("next", "truncated"): truncated,
}
with torch.no_grad():
    old_log_prob = torch.log_softmax(policy(data["observation"]), -1).gather(1, data["action"][:, None])

adv_module = GAE(gamma=0.99, lmbda=0.95, value_network=value_net)
for epoch in range(3):
    adv_module(data)
    log_prob = torch.log_softmax(policy(data["observation"]), -1).gather(1, data["action"][:, None])
    ratio = (log_prob - old_log_prob).exp()
    adv = data["advantage"]
    loss_objective = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean()
    loss_critic = (value_net(data["observation"]) - data["value_target"]).pow(2).mean()
    optim.zero_grad()
    (loss_objective + loss_critic).backward()
    optim.step()

final_reward = data[("next", "reward")]
final_advantage = data["advantage"]
