# label: hazard raises
# why: vis = feat.detach() shares storage and version counter with feat; scaling it to 0-255 for logging corrupts the tensor saved by the mul
import torch
import torch.nn as nn

torch.manual_seed(0)

enc = nn.Sequential(nn.Conv2d(3, 2, 3, padding=1), nn.Sigmoid())
gain = nn.Parameter(torch.ones(1, 2, 1, 1))
images = torch.rand(2, 3, 4, 4)

feat = enc(images)
score = (feat * gain).mean()
vis = feat.detach()
vis.mul_(255.0)  # <-- IPL007
score.backward()
