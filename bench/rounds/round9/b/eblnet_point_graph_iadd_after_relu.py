# label: hazard raises
# why: the graph reasoning block shifts the ReLU output with `z += 4` in place, but ReluBackward needs that output unchanged to know which entries were clipped.
# source: https://github.com/hehao13/EBLNet/issues/9
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GraphReasoning(nn.Module):
    """Point-based graph reasoning over sampled boundary points (B, C, N)."""

    def __init__(self, channels=8, k=3):
        super().__init__()
        self.k = k
        self.conv_node = nn.Conv1d(channels, channels, 1)
        self.relu = nn.ReLU()
        self.conv_edge = nn.Conv1d(channels, channels, 1)

    def forward(self, x):
        z = self.relu(self.conv_node(x))
        z += 4  # <-- IPL001: z is the ReLU output saved by ReluBackward
        sim = torch.bmm(z.transpose(1, 2), z)
        adj = F.softmax(sim / z.shape[1] ** 0.5, dim=-1)
        agg = torch.bmm(x, adj.transpose(1, 2))
        return x + self.conv_edge(agg)


block = GraphReasoning()
points = torch.randn(2, 8, 6)
target = torch.randn(2, 8, 6)
out = block(points)
main_loss = F.mse_loss(out, target)
main_loss.backward()
