# label: hazard silent
# why: DenseNet.forward normalizes the caller's input batch in place (`x[:, 0] = (x[:, 0] - mean) / std`), so every extra pass over the same batch (here the fixed validation batch) feeds re-normalized, drifting images.
# source: https://github.com/pytorch/vision/issues/219
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DenseNet(nn.Module):
    def __init__(self, num_classes=3):
        super(DenseNet, self).__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(8),
            nn.ReLU(inplace=True),
            nn.Conv2d(8, 8, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(8),
        )
        self.classifier = nn.Linear(8, num_classes)

    def forward(self, x):
        x[:, 0] = (x[:, 0] - 0.485) / 0.229  # <-- IPL004: normalizes the caller's batch in place
        x[:, 1] = (x[:, 1] - 0.456) / 0.224  # <-- IPL004: normalizes the caller's batch in place
        x[:, 2] = (x[:, 2] - 0.406) / 0.225  # <-- IPL004: normalizes the caller's batch in place
        features = self.features(x)
        out = F.relu(features, inplace=True)
        out = F.avg_pool2d(out, kernel_size=7).view(features.size(0), -1)
        out = self.classifier(out)
        return out


model = DenseNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
val_images = torch.rand(4, 3, 7, 7)
val_labels = torch.tensor([0, 1, 2, 0])

val_losses = []
for epoch in range(3):
    model.train()
    train_images = torch.rand(4, 3, 7, 7)
    train_labels = torch.tensor([1, 2, 0, 1])
    loss = F.cross_entropy(model(train_images), train_labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

    model.eval()
    with torch.no_grad():
        val_losses.append(F.cross_entropy(model(val_images), val_labels))
val_losses = torch.stack(val_losses)
