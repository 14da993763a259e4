# label: safe
# why: torch.add/torch.mul with out= write into a preallocated buffer built from tensors that do not require grad; the model's graph never sees it
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Linear(4, 2)
raw = torch.randn(5, 4)
jitter = 0.01 * torch.randn(5, 4)

buf = torch.empty(5, 4)
torch.add(raw, jitter, out=buf)
scaled = torch.empty(5, 4)
torch.mul(buf, 2.0, out=scaled)

out = model(scaled)
loss = out.pow(2).mean()
loss.backward()
