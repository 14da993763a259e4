# label: safe
# why: sparsity training adds the L1 subgradient into BatchNorm weight.grad.data in place, between loss.backward() and optimizer.step(), and the in-place ReLUs follow BatchNorm layers.
# source: https://github.com/Eric-mingjie/network-slimming/blob/master/main.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
defaultcfg = [4, 'M', 8]


class vgg(nn.Module):
    def __init__(self, num_classes=10, cfg=None):
        super(vgg, self).__init__()
        if cfg is None:
            cfg = defaultcfg
        self.feature = self.make_layers(cfg, True)
        self.classifier = nn.Linear(cfg[-1], num_classes)

    def make_layers(self, cfg, batch_norm=False):
        layers = []
        in_channels = 3
        for v in cfg:
            if v == 'M':
                layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
            else:
                conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1, bias=False)
                if batch_norm:
                    layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
                else:
                    layers += [conv2d, nn.ReLU(inplace=True)]
                in_channels = v
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.feature(x)
        x = nn.AvgPool2d(2)(x)
        x = x.view(x.size(0), -1)
        return self.classifier(x)


model = vgg()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
s = 0.0001


def updateBN():
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.weight.grad.data.add_(s * torch.sign(m.weight.data))  # L1


train_loader = [(torch.rand(4, 3, 4, 4), torch.tensor([1, 2, 3, 4])) for _ in range(2)]
model.train()
for batch_idx, (data, target) in enumerate(train_loader):
    optimizer.zero_grad()
    output = model(data)
    loss = F.cross_entropy(output, target)
    pred = output.data.max(1, keepdim=True)[1]
    loss.backward()
    updateBN()
    optimizer.step()
