# label: safe
# why: discounted_return writes each step into a zeros buffer and reads the next slot back; the multiplications only save constant discounts, so the slice writes invalidate nothing backward needs.
# source: https://github.com/HorizonRobotics/alf/pull/364
import torch
import torch.nn as nn

torch.manual_seed(0)


class StepType:
    FIRST = 0
    MID = 1
    LAST = 2


def discounted_return(rewards, values, step_types, discounts, final_value=None, time_major=True):
    """Computes discounted return for the first T-1 steps."""
    if not time_major:
        discounts = discounts.transpose(0, 1)
        rewards = rewards.transpose(0, 1)
        values = values.transpose(0, 1)
        step_types = step_types.transpose(0, 1)

    assert values.shape[0] >= 2, "The sequence length needs to be at least 2."

    is_lasts = (step_types == StepType.LAST).to(dtype=torch.float32)
    is_lasts = is_lasts.reshape(list(is_lasts.shape) + [1] * (values.dim() - is_lasts.dim()))
    discounts = discounts.reshape(list(discounts.shape) + [1] * (values.dim() - discounts.dim()))

    rets = torch.zeros(rewards.shape, dtype=rewards.dtype)
    rets[-1] = values[-1]

    with torch.no_grad():
        for t in reversed(range(rewards.shape[0] - 1)):
            acc_value = rets[t + 1] * discounts[t + 1] + rewards[t + 1]
            rets[t] = is_lasts[t] * values[t] + (1 - is_lasts[t]) * acc_value

    rets = rets[:-1]
    if not time_major:
        rets = rets.transpose(0, 1)
    return rets.detach()


class ValueNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def forward(self, obs):
        return self.fc(obs).squeeze(-1)


value_net = ValueNet()
T, B = 5, 2
obs = torch.randn(T, B, 3)
rewards = torch.randn(T, B)
step_types = torch.tensor([[0, 0], [1, 1], [2, 1], [0, 1], [1, 2]])
discounts = torch.full((T, B), 0.9) * (step_types != StepType.LAST).float()

values = value_net(obs)
returns = discounted_return(rewards, values, step_types, discounts)
critic_loss = ((values[:-1] - returns) ** 2).mean()
critic_loss.backward()
