# label: hazard silent
# why: clamping the sigmoid output through .data bypasses the version counter, so sigmoid's backward silently uses the clamped values it saved.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Calibrated(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, 1)

    def forward(self, x):
        p = torch.sigmoid(self.fc(x) * 3.0)
        # keep probabilities away from 0/1 "without touching autograd"
        p.data.clamp_(0.2, 0.8)  # <-- IPL007: silently edits sigmoid's saved output
        return p


model = Calibrated(4)
x = torch.randn(12, 4)
y = (torch.rand(12, 1) > 0.5).float()
p = model(x)
loss = nn.functional.binary_cross_entropy(p, y)
loss.backward()
w_grad = model.fc.weight.grad.clone()
