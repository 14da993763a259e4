# label: hazard raises
# why: clamping probs.detach() in place writes into the sigmoid output that SigmoidBackward saved (detach shares the version counter), so backward raises.
import torch
import torch.nn as nn

torch.manual_seed(0)

clf = nn.Linear(5, 1)
x = torch.randn(8, 5)
y = (torch.rand(8, 1) > 0.5).float()

probs = torch.sigmoid(clf(x))
# keep log() finite without "affecting the gradient"
probs.detach().clamp_(1e-4, 1 - 1e-4)  # <-- IPL007
loss = -(y * probs.log() + (1 - y) * (1 - probs).log()).mean()
loss.backward()
