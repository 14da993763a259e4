# label: hazard silent
# why: CenteredMLP.forward subtracts its running mean from the input in place, so the second model in the ensemble receives an already-centred batch.
import torch
import torch.nn as nn

torch.manual_seed(0)


class CenteredMLP(nn.Module):
    def __init__(self, dim, classes):
        super().__init__()
        self.register_buffer("mean", torch.randn(dim))
        self.net = nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Linear(16, classes))

    def forward(self, x):
        x -= self.mean  # <-- IPL004: x belongs to the caller
        return self.net(x)


model_a = CenteredMLP(6, 3).eval()
model_b = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3)).eval()

batch = torch.randn(20, 6)
with torch.no_grad():
    probs_a = model_a(batch).softmax(-1)
    probs_b = model_b(batch).softmax(-1)
    ensemble = (probs_a + probs_b) / 2
