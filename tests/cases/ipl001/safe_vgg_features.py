# label: safe
# why: VGG feature extractor: every inplace ReLU follows a conv/linear (which saves its input, not its output); maxpool reads the ReLU output after the write
import torch
import torch.nn as nn

torch.manual_seed(0)


def make_layers(cfg, in_channels=3):
    layers = []
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            layers += [nn.Conv2d(in_channels, v, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


class TinyVGG(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.features = make_layers([8, "M", 16, 16, "M"])
        self.classifier = nn.Sequential(
            nn.Linear(16 * 2 * 2, 32),
            nn.ReLU(True),
            nn.Dropout(0.5),
            nn.Linear(32, num_classes),
        )

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


model = TinyVGG()
images = torch.randn(3, 3, 8, 8)
labels = torch.tensor([1, 0, 3])
loss = nn.functional.cross_entropy(model(images), labels)
loss.backward()
