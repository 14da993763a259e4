# label: hazard raises
# why: SCNN's slice-by-slice message passing adds each conv message into the feature map in place, but every conv saved the neighbouring slice (a view of the same map) and the backbone ReLU saved the map itself.
# source: https://github.com/voldemortX/pytorch-auto-drive/issues/121
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SpatialConv(nn.Module):
    # SCNN
    def __init__(self, num_channels=8):
        super().__init__()
        self.conv_d = nn.Conv2d(num_channels, num_channels, (1, 3), padding=(0, 1))
        self.conv_u = nn.Conv2d(num_channels, num_channels, (1, 3), padding=(0, 1))
        self.conv_r = nn.Conv2d(num_channels, num_channels, (3, 1), padding=(1, 0))
        self.conv_l = nn.Conv2d(num_channels, num_channels, (3, 1), padding=(1, 0))

    def forward(self, input):
        output = input
        # First one remains unchanged (according to the original paper)
        # Down
        for i in range(1, output.shape[2]):
            msg = F.relu(self.conv_d(output[:, :, i - 1:i, :]))
            output[:, :, i:i + 1, :].add_(msg)  # <-- IPL001: conv_d saved the previous slice of this same map
        # Up
        for i in range(output.shape[2] - 2, 0, -1):
            msg = F.relu(self.conv_u(output[:, :, i + 1:i + 2, :]))
            output[:, :, i:i + 1, :].add_(msg)  # <-- IPL001: conv_u saved the next slice of this same map
        # Right
        for i in range(1, output.shape[3]):
            msg = F.relu(self.conv_r(output[:, :, :, i - 1:i]))
            output[:, :, :, i:i + 1].add_(msg)  # <-- IPL001: conv_r saved the previous column
        # Left
        for i in range(output.shape[3] - 2, 0, -1):
            msg = F.relu(self.conv_l(output[:, :, :, i + 1:i + 2]))
            output[:, :, :, i:i + 1].add_(msg)  # <-- IPL001: conv_l saved the next column
        return output


class SCNNHead(nn.Module):
    def __init__(self, in_channels=4, num_channels=8, num_classes=3):
        super().__init__()
        self.layer = nn.Sequential(nn.Conv2d(in_channels, num_channels, 3, padding=1), nn.ReLU())
        self.scnn = SpatialConv(num_channels)
        self.classifier = nn.Conv2d(num_channels, num_classes, 1)

    def forward(self, x):
        x = self.layer(x)
        x = self.scnn(x)
        return self.classifier(x)


net = SCNNHead()
images = torch.randn(2, 4, 5, 6)
labels = torch.randint(0, 3, (2, 5, 6))
out = net(images)
loss = F.cross_entropy(out, labels)
loss.backward()
