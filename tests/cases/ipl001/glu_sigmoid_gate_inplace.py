# label: hazard raises
# why: sigmoid saves its output; multiplying the gate by the value branch in place corrupts it for backward
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GatedLinearUnit(nn.Module):
    def __init__(self, d_in, d_hidden):
        super().__init__()
        self.w_in = nn.Linear(d_in, 2 * d_hidden)
        self.w_out = nn.Linear(d_hidden, d_in)
        self.norm = nn.LayerNorm(d_in)

    def forward(self, x):
        h = self.norm(x)
        value, gate = self.w_in(h).chunk(2, dim=-1)
        gate = torch.sigmoid(gate)
        gate.mul_(value)  # <-- IPL001
        return x + self.w_out(F.dropout(gate, p=0.0, training=self.training))


ffn = GatedLinearUnit(6, 12)
tokens = torch.randn(3, 4, 6)
out = ffn(tokens)
loss = out.sum(dim=-1).pow(2).mean()
loss.backward()
w_in_grad = ffn.w_in.weight.grad
