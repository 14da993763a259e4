# label: safe
# why: DCGAN discriminator: LeakyReLU(0.2, inplace=True) after conv and after BatchNorm; neither op saves its output
import torch
import torch.nn as nn

torch.manual_seed(0)

netD = nn.Sequential(
    nn.Conv2d(3, 8, 4, 2, 1, bias=False),
    nn.LeakyReLU(0.2, inplace=True),
    nn.Conv2d(8, 16, 4, 2, 1, bias=False),
    nn.BatchNorm2d(16),
    nn.LeakyReLU(0.2, inplace=True),
    nn.Conv2d(16, 1, 4, 1, 0, bias=False),
    nn.Flatten(),
)

images = torch.randn(3, 3, 16, 16)
labels = torch.ones(3, 1)
logits = netD(images)
loss = nn.functional.binary_cross_entropy_with_logits(logits, labels)
loss.backward()
