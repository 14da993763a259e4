# label: safe
# why: data tensors that never require grad can be written in place freely, including index assignment
import torch
import torch.nn as nn

torch.manual_seed(0)

batch = torch.rand(4, 3, 5, 5)
mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
batch.sub_(mean)
batch.div_(std)
batch[:, :, 0, :] = 0.0

model = nn.Sequential(nn.Conv2d(3, 2, 3), nn.Flatten(), nn.Linear(18, 1))
out = model(batch)
loss = out.mean()
loss.backward()
