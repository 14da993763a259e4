# label: hazard raises
# why: EmbeddingNetL2 divides the fc output by its own norm in place, but output.pow(2) saved that same tensor for backward (AddmmBackward output at version 1)
# source: https://github.com/adambielski/siamese-triplet/issues/51 (code: https://github.com/adambielski/siamese-triplet/blob/master/networks.py)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class EmbeddingNet(nn.Module):
    def __init__(self):
        super(EmbeddingNet, self).__init__()
        self.convnet = nn.Sequential(nn.Conv2d(1, 4, 5), nn.PReLU(),
                                     nn.MaxPool2d(2, stride=2),
                                     nn.Conv2d(4, 8, 5), nn.PReLU(),
                                     nn.MaxPool2d(2, stride=2))

        self.fc = nn.Sequential(nn.Linear(8 * 1 * 1, 16),
                                nn.PReLU(),
                                nn.Linear(16, 16),
                                nn.PReLU(),
                                nn.Linear(16, 2)
                                )

    def forward(self, x):
        output = self.convnet(x)
        output = output.view(output.size()[0], -1)
        output = self.fc(output)
        return output

    def get_embedding(self, x):
        return self.forward(x)


class EmbeddingNetL2(EmbeddingNet):
    def __init__(self):
        super(EmbeddingNetL2, self).__init__()

    def forward(self, x):
        output = super(EmbeddingNetL2, self).forward(x)
        output /= output.pow(2).sum(1, keepdim=True).sqrt()  # <-- IPL001: output was saved by output.pow(2)
        return output

    def get_embedding(self, x):
        return self.forward(x)


class TripletNet(nn.Module):
    def __init__(self, embedding_net):
        super(TripletNet, self).__init__()
        self.embedding_net = embedding_net

    def forward(self, x1, x2, x3):
        output1 = self.embedding_net(x1)
        output2 = self.embedding_net(x2)
        output3 = self.embedding_net(x3)
        return output1, output2, output3


class TripletLoss(nn.Module):
    def __init__(self, margin):
        super(TripletLoss, self).__init__()
        self.margin = margin

    def forward(self, anchor, positive, negative, size_average=True):
        distance_positive = (anchor - positive).pow(2).sum(1)  # .pow(.5)
        distance_negative = (anchor - negative).pow(2).sum(1)  # .pow(.5)
        losses = F.relu(distance_positive - distance_negative + self.margin)
        return losses.mean() if size_average else losses.sum()


model = TripletNet(EmbeddingNetL2())
loss_fn = TripletLoss(margin=0.2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

anchor, positive, negative = (torch.randn(4, 1, 16, 16) for _ in range(3))
optimizer.zero_grad()
outputs = model(anchor, positive, negative)
loss = loss_fn(*outputs)
loss.backward()
optimizer.step()
