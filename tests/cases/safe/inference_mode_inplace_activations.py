# label: safe
# why: inside torch.inference_mode() the inplace ReLU after a sigmoid and the in-place rescaling are never differentiated
import torch
import torch.nn as nn

torch.manual_seed(0)

net = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), nn.ReLU(inplace=True), nn.Linear(4, 2))
calib = nn.Linear(2, 2)
x = torch.randn(6, 4)

loss = calib(torch.randn(6, 2)).pow(2).mean()
loss.backward()

with torch.inference_mode():
    scores = net(x)
    scores.exp_()
    scores /= scores.sum(-1, keepdim=True)
    scores = calib(scores)
    scores.relu_()
    result = scores.clone()
