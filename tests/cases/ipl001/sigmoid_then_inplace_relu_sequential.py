# label: hazard raises
# why: nn.ReLU(inplace=True) directly after nn.Sigmoid overwrites the sigmoid output that SigmoidBackward saved
import torch
import torch.nn as nn

torch.manual_seed(0)

gate_net = nn.Sequential(
    nn.Linear(8, 8),
    nn.Sigmoid(),
    nn.ReLU(inplace=True),  # <-- IPL001
    nn.Linear(8, 1),
)

x = torch.randn(4, 8)
out = gate_net(x)
loss = out.pow(2).mean()
loss.backward()
