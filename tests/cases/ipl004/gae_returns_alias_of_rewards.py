# label: hazard silent
# why: discounted returns are accumulated in place into a name that aliases the reward tensor, so the later reward statistics read the returns instead.
import torch
import torch.nn as nn

torch.manual_seed(0)

T = 7
gamma = 0.9
policy = nn.Linear(4, 2)
obs = torch.randn(T, 4)
actions = torch.randint(0, 2, (T,))
rewards = torch.randn(T)


def discounted_returns(r, gamma):
    returns = r
    for t in reversed(range(len(r) - 1)):
        returns[t] += gamma * returns[t + 1]  # <-- IPL004: the caller reads `rewards` again
    return returns


returns = discounted_returns(rewards, gamma)
baseline = rewards.mean()

logp = torch.log_softmax(policy(obs), dim=-1)
chosen = logp.gather(1, actions.unsqueeze(1)).squeeze(1)
loss = -((returns - baseline) * chosen).mean()
loss.backward()
episode_reward = rewards.sum()
