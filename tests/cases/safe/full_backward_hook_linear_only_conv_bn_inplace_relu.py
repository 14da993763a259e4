# label: safe
# why: the full backward hooks reach only the Linear head; the in-place ReLUs follow BatchNorm layers no hook wraps, and nothing writes the Linear's output.
import torch
import torch.nn as nn

torch.manual_seed(0)


def make_features(channels):
    layers = []
    in_channels = 3
    for out_channels in channels:
        layers += [nn.Conv2d(in_channels, out_channels, 3, padding=1), nn.BatchNorm2d(out_channels)]
        layers.append(nn.ReLU(inplace=True))
        in_channels = out_channels
    return nn.Sequential(*layers)


features = make_features([4, 8])
head = nn.Linear(8, 3)
grads = []
hooks = [m.register_full_backward_hook(lambda m, gi, go: grads.append(go[0])) for m in head.modules() if isinstance(m, nn.Linear)]
images = torch.randn(2, 3, 6, 6)
logits = head(features(images).mean(dim=(2, 3)))
loss = logits.logsumexp(dim=1).sum()
loss.backward()
