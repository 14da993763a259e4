# label: hazard silent
# why: subtracting the first column in place (`a -= a[:, :1]`) reads from a view of the tensor being written, so for more than one row the first column is zeroed before the other columns read it and the baseline is silently wrong.
# source: https://github.com/pytorch/pytorch/issues/135487
import torch
from torch import nn

torch.manual_seed(0)


def relative_to_first(a):
    a -= a[:, :1]  # <-- IPL002: in-place write while the same storage is read through the a[:, :1] view
    return a


critic = nn.Linear(4, 3)
obs = torch.randn(2, 4)
with torch.no_grad():
    q_values = critic(obs)
    b = torch.clone(q_values)
    advantages = relative_to_first(q_values)
    expected = b - b[:, :1]
    matches = torch.allclose(advantages, expected)
