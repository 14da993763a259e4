# label: safe no-twin
# why: DCGAN weights_init writes parameters through .data before any forward pass; nothing has been saved yet
import torch
import torch.nn as nn

torch.manual_seed(0)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        m.weight.data.normal_(0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        m.weight.data.normal_(1.0, 0.02)
        m.bias.data.fill_(0)


netG = nn.Sequential(
    nn.ConvTranspose2d(4, 8, 4, 1, 0, bias=False),
    nn.BatchNorm2d(8),
    nn.ReLU(True),
    nn.ConvTranspose2d(8, 3, 4, 2, 1, bias=False),
    nn.Tanh(),
)
netG.apply(weights_init)
noise = torch.randn(2, 4, 1, 1)
fake = netG(noise)
loss = fake.pow(2).mean()
loss.backward()
