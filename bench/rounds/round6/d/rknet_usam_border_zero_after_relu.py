# label: hazard raises
# why: with polish=True the USAM attention map is zeroed on its border by slice assignment, but att is the ReLU output that ReluBackward saved (output 0 of ReluBackward0 at version 4)
# source: https://github.com/AggMan96/RK-Net/issues/9 (model.py, USAM)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class USAM(nn.Module):
    def __init__(self, kernel_size=3, padding=1, polish=True):
        super(USAM, self).__init__()

        kernel = torch.ones((kernel_size, kernel_size))
        kernel = kernel.unsqueeze(0).unsqueeze(0)
        self.weight = nn.Parameter(data=kernel, requires_grad=False)

        kernel2 = torch.ones((1, 1)) * (kernel_size * kernel_size)
        kernel2 = kernel2.unsqueeze(0).unsqueeze(0)
        self.weight2 = nn.Parameter(data=kernel2, requires_grad=False)

        self.polish = polish
        self.pad = padding
        self.relu = nn.ReLU()
        self.bn = nn.BatchNorm2d(1)

    def __call__(self, x):
        fmap = x.sum(1, keepdim=True)
        x1 = F.conv2d(fmap, self.weight, padding=self.pad)
        x2 = F.conv2d(fmap, self.weight2, padding=0)

        att = x2 - x1
        att = self.bn(att)
        att = self.relu(att)

        if self.polish:
            att[:, :, :, 0] = 0  # <-- IPL001: att is the ReLU output saved for backward
            att[:, :, :, -1] = 0  # <-- IPL001: att is the ReLU output saved for backward
            att[:, :, 0, :] = 0  # <-- IPL001: att is the ReLU output saved for backward
            att[:, :, -1, :] = 0  # <-- IPL001: att is the ReLU output saved for backward

        output = x + att * x

        return output


class TinyBranch(nn.Module):
    def __init__(self, class_num=4):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.usam = USAM()
        self.classifier = nn.Linear(8, class_num)

    def forward(self, x):
        x = self.conv(x)
        x = self.usam(x)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.classifier(x)


model = TinyBranch()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
inputs = torch.randn(2, 3, 8, 8)
labels = torch.tensor([1, 3])

optimizer.zero_grad()
loss = F.cross_entropy(model(inputs), labels)
loss.backward()
optimizer.step()
