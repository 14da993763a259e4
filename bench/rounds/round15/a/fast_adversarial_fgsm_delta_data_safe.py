# label: safe
# why: FGSM training initialises delta in place before it requires grad and later updates it only through delta.data after loss.backward(), so no saved tensor of a live graph is overwritten; the model step uses the freshly built graph.
# source: https://github.com/locuslab/fast_adversarial/issues/21
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

mu = torch.tensor([0.4914, 0.4822, 0.4465]).view(3, 1, 1)
std = torch.tensor([0.2471, 0.2435, 0.2616]).view(3, 1, 1)
upper_limit = ((1 - mu) / std)
lower_limit = ((0 - mu) / std)


def clamp(X, lower_limit, upper_limit):
    return torch.max(torch.min(X, upper_limit), lower_limit)


class PreActBlock(nn.Module):
    def __init__(self, in_planes, planes):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(in_planes)
        self.conv1 = nn.Conv2d(in_planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)

    def forward(self, x):
        out = F.relu(self.bn1(x))
        shortcut = x
        out = self.conv1(out)
        out = self.conv2(F.relu(self.bn2(out)))
        out += shortcut
        return out


class PreActResNet(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, 1, 1, bias=False)
        self.layer1 = PreActBlock(4, 4)
        self.bn = nn.BatchNorm2d(4)
        self.linear = nn.Linear(4, num_classes)

    def forward(self, x):
        out = self.conv1(x)
        out = self.layer1(out)
        out = F.relu(self.bn(out))
        out = F.adaptive_avg_pool2d(out, 1).flatten(1)
        return self.linear(out)


model = PreActResNet()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
epsilon = (8 / 255.) / std
alpha = (10 / 255.) / std

X = (torch.rand(4, 3, 6, 6) - mu) / std
y = torch.randint(0, 3, (4,))

delta = torch.zeros(4, 3, 6, 6)
for j in range(len(epsilon)):
    delta[:, j, :, :].uniform_(-epsilon[j][0][0].item(), epsilon[j][0][0].item())
delta.data = clamp(delta, lower_limit - X, upper_limit - X)
delta.requires_grad = True
output = model(X + delta[:X.size(0)])
loss = F.cross_entropy(output, y)
loss.backward()
grad = delta.grad.detach()
delta.data = clamp(delta + alpha * torch.sign(grad), -epsilon, epsilon)
delta.data[:X.size(0)] = clamp(delta[:X.size(0)], lower_limit - X, upper_limit - X)
delta = delta.detach()
opt.zero_grad()
output = model(X + delta[:X.size(0)])
train_loss = F.cross_entropy(output, y)
train_loss.backward()
conv1_grad = model.conv1.weight.grad.clone()
opt.step()
