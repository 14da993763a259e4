# label: hazard silent
# why: the max-norm renormalisation rescales weight.data after F.linear saved the weight, so the gradient sent back to earlier layers uses the rescaled weight.
import torch
import torch.nn as nn
import torch.nn.functional as F


class MaxNormLinear(nn.Linear):
    """Linear layer whose rows are kept inside an L2 ball (max-norm constraint)."""

    def __init__(self, in_features, out_features, max_norm=0.5):
        super().__init__(in_features, out_features)
        self.max_norm = max_norm

    def forward(self, x):
        out = F.linear(x, self.weight, self.bias)
        if self.training:
            w = self.weight.data
            norms = w.norm(dim=1, keepdim=True)
            desired = norms.clamp(max=self.max_norm)
            w.mul_(desired / (norms + 1e-7))  # <-- IPL007
        return out


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 8)
        self.fc2 = MaxNormLinear(8, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


torch.manual_seed(0)
model = MLP()
model.train()
x = torch.randn(4, 5)
out = model(x)
loss = out.pow(2).sum()
loss.backward()
