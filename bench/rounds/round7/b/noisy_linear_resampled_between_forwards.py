# label: hazard raises
# why: NoisyLinear.forward resamples its epsilon buffer in place with normal_(), but the previous forward (online net on states) saved that buffer for the sigma_weight gradient, so the second forward on next_states breaks backward.
# source: https://github.com/PacktPublishing/Deep-Reinforcement-Learning-Hands-On-Second-Edition/issues/21
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class NoisyLinear(nn.Linear):
    def __init__(self, in_features, out_features, sigma_init=0.017, bias=True):
        super(NoisyLinear, self).__init__(in_features, out_features, bias=bias)
        self.sigma_weight = nn.Parameter(torch.full((out_features, in_features), sigma_init))
        self.register_buffer("epsilon_weight", torch.zeros(out_features, in_features))
        if bias:
            self.sigma_bias = nn.Parameter(torch.full((out_features,), sigma_init))
            self.register_buffer("epsilon_bias", torch.zeros(out_features))
        self.reset_parameters()

    def reset_parameters(self):
        std = math.sqrt(3 / self.in_features)
        self.weight.data.uniform_(-std, std)
        self.bias.data.uniform_(-std, std)

    def forward(self, input):
        self.epsilon_weight.normal_()  # <-- IPL001: resampled while the last forward's product still needs it
        bias = self.bias
        if bias is not None:
            self.epsilon_bias.normal_()  # <-- IPL001: same for the bias noise
            bias = bias + self.sigma_bias * self.epsilon_bias
        return F.linear(input, self.weight + self.sigma_weight * self.epsilon_weight, bias)


class SimpleFFDQN(nn.Module):
    def __init__(self, obs_len, actions_n):
        super(SimpleFFDQN, self).__init__()
        self.fc_val = nn.Sequential(nn.Linear(obs_len, 16), nn.ReLU(), NoisyLinear(16, 1))
        self.fc_adv = nn.Sequential(nn.Linear(obs_len, 16), nn.ReLU(), NoisyLinear(16, actions_n))

    def forward(self, x):
        val = self.fc_val(x)
        adv = self.fc_adv(x)
        return val + (adv - adv.mean(dim=1, keepdim=True))


def calc_loss(batch, net, tgt_net, gamma):
    states_v, actions_v, rewards_v, done_mask, next_states_v = batch
    state_action_values = net(states_v).gather(1, actions_v.unsqueeze(-1)).squeeze(-1)
    next_state_actions = net(next_states_v).max(1)[1]
    next_state_values = tgt_net(next_states_v).gather(1, next_state_actions.unsqueeze(-1)).squeeze(-1)
    next_state_values[done_mask] = 0.0
    expected_state_action_values = next_state_values.detach() * gamma + rewards_v
    return nn.MSELoss()(state_action_values, expected_state_action_values)


net = SimpleFFDQN(6, 3)
tgt_net = SimpleFFDQN(6, 3)
tgt_net.load_state_dict(net.state_dict())
batch = (
    torch.randn(8, 6),
    torch.randint(0, 3, (8,)),
    torch.randn(8),
    torch.tensor([False, False, True, False, False, False, True, False]),
    torch.randn(8, 6),
)
loss_v = calc_loss(batch, net, tgt_net, 0.99)
loss_v.backward()
