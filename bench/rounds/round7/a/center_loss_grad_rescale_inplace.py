# label: safe
# why: CenterLoss fills distmat with addmm_ on a fresh sum, scales the loss with `*=` before anything saved it, and rescales the centers' .grad in place only after backward.
# source: https://github.com/KaiyangZhou/pytorch-center-loss/blob/master/main.py
import torch
import torch.nn as nn

torch.manual_seed(1)


class CenterLoss(nn.Module):
    def __init__(self, num_classes=10, feat_dim=2):
        super(CenterLoss, self).__init__()
        self.num_classes = num_classes
        self.feat_dim = feat_dim
        self.centers = nn.Parameter(torch.randn(self.num_classes, self.feat_dim))

    def forward(self, x, labels):
        batch_size = x.size(0)
        distmat = torch.pow(x, 2).sum(dim=1, keepdim=True).expand(batch_size, self.num_classes) + \
            torch.pow(self.centers, 2).sum(dim=1, keepdim=True).expand(self.num_classes, batch_size).t()
        distmat.addmm_(x, self.centers.t(), beta=1, alpha=-2)

        classes = torch.arange(self.num_classes).long()
        labels = labels.unsqueeze(1).expand(batch_size, self.num_classes)
        mask = labels.eq(classes.expand(batch_size, self.num_classes))

        dist = distmat * mask.float()
        loss = dist.clamp(min=1e-12, max=1e+12).sum() / batch_size
        return loss


class ConvNet(nn.Module):
    def __init__(self, num_classes=10):
        super(ConvNet, self).__init__()
        self.conv1_1 = nn.Conv2d(1, 4, 3, stride=1, padding=1)
        self.prelu1_1 = nn.PReLU()
        self.fc1 = nn.Linear(4 * 4 * 4, 2)
        self.prelu_fc1 = nn.PReLU()
        self.fc2 = nn.Linear(2, num_classes)

    def forward(self, x):
        x = self.prelu1_1(self.conv1_1(x))
        x = nn.functional.max_pool2d(x, 2)
        x = x.view(-1, 4 * 4 * 4)
        x = self.prelu_fc1(self.fc1(x))
        y = self.fc2(x)
        return x, y


weight_cent = 0.5
model = ConvNet()
criterion_xent = nn.CrossEntropyLoss()
criterion_cent = CenterLoss(num_classes=10, feat_dim=2)
optimizer_model = torch.optim.SGD(model.parameters(), lr=0.01, weight_decay=5e-04, momentum=0.9)
optimizer_centloss = torch.optim.SGD(criterion_cent.parameters(), lr=0.5)

trainloader = [(torch.rand(4, 1, 8, 8), torch.tensor([0, 3, 3, 7])) for _ in range(2)]
for batch_idx, (data, labels) in enumerate(trainloader):
    features, outputs = model(data)
    loss_xent = criterion_xent(outputs, labels)
    loss_cent = criterion_cent(features, labels)
    loss_cent *= weight_cent
    loss = loss_xent + loss_cent
    optimizer_model.zero_grad()
    optimizer_centloss.zero_grad()
    loss.backward()
    optimizer_model.step()
    # by doing so, weight_cent would not impact on the learning of centers
    for param in criterion_cent.parameters():
        param.grad.data *= (1. / weight_cent)
    optimizer_centloss.step()
