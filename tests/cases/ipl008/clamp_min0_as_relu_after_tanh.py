# label: hazard raises
# why: clamp_(min=0) used as an in-place ReLU on a tanh output; TanhBackward saved that output, so the "relu" breaks backward
import torch
import torch.nn as nn

torch.manual_seed(0)


class RectifiedTanh(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = torch.tanh(self.fc(x))
        h.clamp_(min=0)  # <-- IPL001, IPL008
        return h


model = RectifiedTanh()
x = torch.randn(3, 4)
out = model(x)
loss = out.sum()
loss.backward()
