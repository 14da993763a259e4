# label: hazard raises
# why: `gates[:, 0] = 1.0` inside forward writes into the sigmoid output that sigmoid saved for backward.
import torch
import torch.nn as nn

torch.manual_seed(0)


class GatedMixer(nn.Module):
    def __init__(self, dim, n_experts):
        super().__init__()
        self.gate = nn.Linear(dim, n_experts)
        self.experts = nn.ModuleList(nn.Linear(dim, dim) for _ in range(n_experts))

    def forward(self, x):
        gates = torch.sigmoid(self.gate(x))
        gates[:, 0] = 1.0  # <-- IPL001: always keep the shared expert open
        expert_out = torch.stack([e(x) for e in self.experts], dim=1)
        return (gates.unsqueeze(-1) * expert_out).sum(dim=1)


mixer = GatedMixer(6, 3)
batch = torch.randn(5, 6)
mixed = mixer(batch)
mixed.pow(2).mean().backward()
