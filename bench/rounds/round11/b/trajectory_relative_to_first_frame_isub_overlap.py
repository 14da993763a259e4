# label: hazard silent
# why: traj -= traj[:, :1] subtracts a view of the first frame from the whole 3-D tensor in place; the first frame is zeroed before later frames read it, and for 3+ dimensional tensors PyTorch does not raise its overlap error, so the later frames keep their absolute coordinates.
# source: https://github.com/pytorch/pytorch/issues/115521
import torch
import torch.nn as nn

torch.manual_seed(0)


class TrajectoryEncoder(nn.Module):
    def __init__(self, dim=2, hidden=16, horizon=4):
        super().__init__()
        self.rnn = nn.GRU(dim, hidden, batch_first=True)
        self.head = nn.Linear(hidden, horizon * dim)
        self.horizon = horizon
        self.dim = dim

    def forward(self, traj):
        h, _ = self.rnn(traj)
        return self.head(h[:, -1]).view(-1, self.horizon, self.dim)


def to_relative(traj):
    # express every observed position relative to the first observed frame
    traj -= traj[:, :1]  # <-- IPL002: the first-frame view is read while the same storage is being overwritten
    return traj


batch, obs_len, pred_len = 6, 8, 4
full = torch.cumsum(torch.randn(batch, obs_len + pred_len, 2), dim=1) + 10.0
obs = full[:, :obs_len].clone()
future = full[:, obs_len:] - full[:, :1]

model = TrajectoryEncoder(horizon=pred_len)
obs_rel = to_relative(obs)
pred = model(obs_rel)
loss = nn.functional.mse_loss(pred, future)
loss.backward()
rel_positions = obs_rel.detach().clone()
