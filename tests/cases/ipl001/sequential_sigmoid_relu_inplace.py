# label: hazard raises
# why: in the Sequential the in-place ReLU overwrites the Sigmoid output, which sigmoid saved for its backward.
import torch
import torch.nn as nn

torch.manual_seed(0)

encoder = nn.Sequential(nn.Linear(10, 16), nn.Sigmoid(), nn.ReLU(inplace=True), nn.Linear(16, 4))  # <-- IPL001
head = nn.Linear(4, 1)

x = torch.randn(6, 10)
y = torch.randn(6, 1)
pred = head(encoder(x))
loss = nn.functional.mse_loss(pred, y)
loss.backward()
