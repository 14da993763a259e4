# label: hazard silent
# why: the module returns (pre, pre.tanh_()); both entries are the same tensor, so the "pre-activation" output is already squashed
import torch
import torch.nn as nn

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        pre = self.fc(x)
        return pre, pre.tanh_()  # <-- IPL002


enc = Encoder()
x = torch.randn(5, 4)
pre_act, act = enc(x)
loss = act.sum() + 0.1 * pre_act.pow(2).sum()
loss.backward()
