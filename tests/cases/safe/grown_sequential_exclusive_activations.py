# label: safe
# why: each hidden layer gets either a Tanh or an in-place ReLU, never both, so no in-place member ever runs on Tanh's saved output.
import torch
import torch.nn as nn

torch.manual_seed(0)


def make_mlp(sizes, smooth):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if smooth:
            layers.append(nn.Tanh())
        else:
            layers.append(nn.ReLU(inplace=True))
    return nn.Sequential(*layers)


smooth = make_mlp([4, 8, 2], smooth=True)
sharp = make_mlp([4, 8, 2], smooth=False)
x = torch.randn(5, 4)
loss = smooth(x).sum() + sharp(x).sum()
loss.backward()
