# label: hazard raises
# why: the loop appends Tanh and then Dropout(inplace=True) to the same list, so in the Sequential the dropout overwrites the output Tanh saved for backward.
import torch
import torch.nn as nn

torch.manual_seed(0)


def make_encoder(sizes, p):
    layers = []
    for i in range(len(sizes) - 1):
        layers += [nn.Linear(sizes[i], sizes[i + 1]), nn.Tanh()]
        if p > 0:
            layers.append(nn.Dropout(p, inplace=True))  # <-- IPL001: overwrites Tanh's saved output
    return nn.Sequential(*layers)


encoder = make_encoder([6, 8, 4], p=0.25)
x = torch.randn(3, 6)
loss = encoder(x).pow(2).sum()
loss.backward()
