# label: hazard raises
# why: each nn.Dropout(0.5, inplace=True) overwrites the output of the preceding nn.ReLU(inplace=True), which ReLU saved for its backward, so loss.backward() in the image-wise training step fails.
# source: https://github.com/ImagingLab/ICIAR2018/issues/10
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BaseNetwork(nn.Module):
    def __init__(self, name, channels=1):
        super(BaseNetwork, self).__init__()
        self._name = name
        self._channels = channels

    def name(self):
        return self._name

    def initialize_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, nonlinearity='relu')
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)


class ImageWiseNetwork(BaseNetwork):
    def __init__(self, channels=1):
        super(ImageWiseNetwork, self).__init__('iw' + str(channels), channels)

        self.features = nn.Sequential(
            # Block 1
            nn.Conv2d(in_channels=12 * channels, out_channels=16, kernel_size=3, stride=1, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),
            nn.Conv2d(in_channels=16, out_channels=16, kernel_size=2, stride=2),
            nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),

            # Block 2
            nn.Conv2d(in_channels=16, out_channels=32, kernel_size=3, stride=1, padding=1),
            nn.BatchNorm2d(32),
            nn.ReLU(inplace=True),
            nn.Conv2d(in_channels=32, out_channels=32, kernel_size=2, stride=2),
            nn.BatchNorm2d(32),
            nn.ReLU(inplace=True),

            nn.Conv2d(in_channels=32, out_channels=1, kernel_size=1, stride=1),
        )

        self.classifier = nn.Sequential(
            nn.Linear(1 * 4 * 4, 32),
            nn.ReLU(inplace=True),
            nn.Dropout(0.5, inplace=True),  # <-- IPL001

            nn.Linear(32, 32),
            nn.ReLU(inplace=True),
            nn.Dropout(0.5, inplace=True),  # <-- IPL001

            nn.Linear(32, 4),
        )

        self.initialize_weights()

    def forward(self, x):
        x = self.features(x)
        x = x.view(x.size(0), -1)
        x = self.classifier(x)
        x = F.log_softmax(x, dim=1)
        return x


def train_step(network, optimizer, images, labels):
    network.train()
    optimizer.zero_grad()
    output = network(images)
    loss = F.nll_loss(output, labels)
    loss.backward()
    optimizer.step()
    return loss.detach()


def main():
    network = ImageWiseNetwork(channels=1)
    optimizer = torch.optim.Adam(network.parameters(), lr=1e-3)
    images = torch.randn(4, 12, 16, 16)
    labels = torch.tensor([0, 1, 2, 3])
    loss = train_step(network, optimizer, images, labels)
    return loss, network.classifier[0].weight.detach().clone()


loss, fc_weight = main()
