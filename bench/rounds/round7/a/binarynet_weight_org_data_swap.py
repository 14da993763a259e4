# label: safe no-twin
# why: BinaryNet swaps binarized values into weight.data for the forward/backward and copies the real weights back through .data before optimizer.step(); every .data write happens outside a pending backward.
# source: https://github.com/itayhubara/BinaryNet.pytorch/issues/19
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def Binarize(tensor, quant_mode='det'):
    if quant_mode == 'det':
        return tensor.sign()
    return tensor.add_(1).div_(2).add_(torch.rand(tensor.size()).add(-0.5)).clamp_(0, 1).round().mul_(2).add_(-1)


class BinarizeLinear(nn.Linear):
    def __init__(self, *kargs, **kwargs):
        super(BinarizeLinear, self).__init__(*kargs, **kwargs)

    def forward(self, input):
        if input.size(1) != 784:
            input.data = Binarize(input.data)
        if not hasattr(self.weight, 'org'):
            self.weight.org = self.weight.data.clone()
        self.weight.data = Binarize(self.weight.org)
        out = F.linear(input, self.weight)
        if self.bias is not None:
            self.bias.org = self.bias.data.clone()
            out += self.bias.view(1, -1).expand_as(out)
        return out


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = BinarizeLinear(784, 16)
        self.bn1 = nn.BatchNorm1d(16)
        self.htanh1 = nn.Hardtanh()
        self.fc2 = BinarizeLinear(16, 10)

    def forward(self, x):
        x = x.view(-1, 28 * 28)
        x = self.htanh1(self.bn1(self.fc1(x)))
        return self.fc2(x)


model = Net()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
inputs = torch.rand(4, 1, 28, 28)
target = torch.tensor([1, 2, 3, 4])
for step in range(2):
    output = model(inputs)
    loss = criterion(output, target)
    optimizer.zero_grad()
    loss.backward()
    for p in list(model.parameters()):
        if hasattr(p, 'org'):
            p.data.copy_(p.org)
    optimizer.step()
    for p in list(model.parameters()):
        if hasattr(p, 'org'):
            p.org.copy_(p.data.clamp_(-1, 1))
