# label: hazard silent
# why: the sampled batch is re-aligned by writing sample["action"][:, :-1] into the overlapping view data["action"] = sample["action"][:, 1:] in place, so the left-to-right copy overwrites actions before they are read and the world model trains on corrupted actions.
# source: https://github.com/NM512/r2dreamer/issues/9
import torch
import torch.nn as nn

torch.manual_seed(0)


def set_(td, key, value):
    """TensorDict-style in-place set: write value into the existing entry."""
    td[key].copy_(value)  # <-- IPL002: destination and source overlap in memory (shifted views of one buffer)
    return td


class ReplayBuffer:
    def __init__(self, capacity, seq_len, obs_dim, act_dim):
        self.obs = torch.randn(capacity, seq_len + 1, obs_dim)
        self.action = torch.randn(capacity, seq_len + 1, act_dim)
        self.reward = torch.randn(capacity, seq_len + 1)

    def sample(self, idx):
        return {"obs": self.obs[idx], "action": self.action[idx], "reward": self.reward[idx]}


class WorldModel(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=16):
        super().__init__()
        self.rnn = nn.GRU(obs_dim + act_dim, hidden, batch_first=True)
        self.reward_head = nn.Linear(hidden, 1)

    def forward(self, obs, action):
        h, _ = self.rnn(torch.cat([obs, action], dim=-1))
        return self.reward_head(h).squeeze(-1)


act_dim = 4
buffer = ReplayBuffer(capacity=8, seq_len=20, obs_dim=3, act_dim=act_dim)
model = WorldModel(3, act_dim)

sample_td = buffer.sample(torch.tensor([0, 3, 5]))
# drop the first step of every field; the action taken *before* each step is the previous action
data = {k: v[:, 1:] for k, v in sample_td.items()}
data = set_(data, "action", sample_td["action"][:, :-1])

pred_reward = model(data["obs"], data["action"])
loss = ((pred_reward - data["reward"]) ** 2).mean()
loss.backward()
actions_used = data["action"].clone()
