# label: safe
# why: forward_head first converts the uint8 observations to a fresh float tensor and only then normalizes that copy in place with sub_/mul_, before any op has saved it; the uint8 replay buffer is untouched.
# source: https://github.com/alex-petrenko/sample-factory/commit/55a524e463c8ffc184f3b633ceea35d761d5a503
import torch
import torch.nn as nn
from torch.nn import functional

torch.manual_seed(0)
EPS = 1e-8


class Cfg:
    obs_subtract_mean = 128.0
    obs_scale = 128.0
    hidden_size = 16


class ActorCritic(nn.Module):
    def __init__(self, cfg, num_actions=3):
        super().__init__()
        self.cfg = cfg
        self.conv_head = nn.Sequential(nn.Conv2d(3, 4, 3, stride=2), nn.ELU(), nn.Conv2d(4, 4, 3, stride=2), nn.ELU())
        self.conv_out_size = 4 * 1 * 1
        self.linear1 = nn.Linear(self.conv_out_size, cfg.hidden_size)
        self.core = nn.GRUCell(cfg.hidden_size, cfg.hidden_size)
        self.critic_linear = nn.Linear(cfg.hidden_size, 1)
        self.dist_linear = nn.Linear(cfg.hidden_size, num_actions)

    def forward_head(self, obs_dict):
        mean = self.cfg.obs_subtract_mean
        scale = self.cfg.obs_scale

        if obs_dict["obs"].dtype != torch.float:
            obs_dict["obs"] = obs_dict["obs"].float()

        if abs(mean) > EPS and abs(scale - 1.0) > EPS:
            obs_dict["obs"].sub_(mean).mul_(1.0 / scale)  # convert rgb observations to [-1, 1] in-place

        x = self.conv_head(obs_dict["obs"])
        x = x.view(-1, self.conv_out_size)
        x = self.linear1(x)
        x = functional.elu(x)
        return x

    def forward_core(self, head_output, rnn_states):
        x = new_rnn_states = self.core(head_output, rnn_states)
        return x, new_rnn_states

    def forward_tail(self, core_output):
        values = self.critic_linear(core_output)
        action_logits = self.dist_linear(core_output)
        return dict(action_logits=action_logits, values=values)

    def forward(self, obs_dict, rnn_states):
        x = self.forward_head(obs_dict)
        x, new_rnn_states = self.forward_core(x, rnn_states)
        result = self.forward_tail(x)
        result["rnn_states"] = new_rnn_states
        return result


actor_critic = ActorCritic(Cfg())
optimizer = torch.optim.Adam(actor_critic.parameters(), lr=1e-3)
obs_buffer = torch.randint(0, 256, (4, 3, 7, 7), dtype=torch.uint8)
rnn_states = torch.zeros(4, 16)
actions = torch.tensor([0, 2, 1, 1])
returns = torch.randn(4, 1)
for epoch in range(2):
    mb = {"obs": obs_buffer}
    result = actor_critic(mb, rnn_states)
    log_probs = torch.log_softmax(result["action_logits"], dim=-1).gather(1, actions[:, None])
    value_loss = (result["values"] - returns).pow(2).mean()
    policy_loss = -(log_probs * (returns - result["values"].detach())).mean()
    loss = policy_loss + 0.5 * value_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
