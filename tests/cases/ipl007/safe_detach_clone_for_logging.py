# label: safe
# why: detach().clone() gives the logging copy its own storage, so scaling it in place cannot reach the saved activations
import torch
import torch.nn as nn

torch.manual_seed(0)

enc = nn.Sequential(nn.Conv2d(3, 2, 3, padding=1), nn.Sigmoid())
gain = nn.Parameter(torch.ones(1, 2, 1, 1))
images = torch.rand(2, 3, 4, 4)

feat = enc(images)
score = (feat * gain).mean()
vis = feat.detach().clone()
vis.mul_(255.0)
vis.clamp_(0, 255)
score.backward()
