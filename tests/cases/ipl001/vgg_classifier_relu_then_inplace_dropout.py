# label: hazard raises
# why: Dropout(inplace=True) rescales the ReLU output in place, and ReLU saved its output for backward.
import torch
import torch.nn as nn


class TinyVGG(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 8, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Linear(8 * 2 * 2, 16),
            nn.ReLU(inplace=True),
            nn.Dropout(p=0.5, inplace=True),  # <-- IPL001
            nn.Linear(16, num_classes),
        )

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


torch.manual_seed(0)
model = TinyVGG()
model.train()
images = torch.randn(2, 3, 8, 8)
target = torch.tensor([0, 2])
out = model(images)
loss = nn.functional.cross_entropy(out, target)
loss.backward()
