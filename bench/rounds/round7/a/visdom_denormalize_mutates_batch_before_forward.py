# label: hazard silent
# why: the in-place per-channel normalize/denormalize helper is called on the training batch to make a visdom preview, so the batch itself is silently denormalized before the forward pass.
# source: https://github.com/pytorch/vision/issues/517
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


def normalize(tensor, mean, std):
    # torchvision.transforms.functional.normalize at the time: works in place
    for t, m, s in zip(tensor, mean, std):
        t.sub_(m).div_(s)
    return tensor


def denormalize(tensor, mean, std):
    for t, m, s in zip(tensor, mean, std):
        t.mul_(s).add_(m)  # <-- IPL004: rewrites the caller's image in place
    return tensor


class Visualizer:
    def __init__(self):
        self.images = {}

    def image(self, name, img):
        self.images[name] = img.detach().cpu()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(4, 5)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


raw = [torch.rand(3, 8, 8) for _ in range(2)]
batch = torch.stack([normalize(img.clone(), MEAN, STD) for img in raw])
labels = torch.tensor([1, 3])

model = Net()
vis = Visualizer()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for i, img in enumerate(batch):
    vis.image('input_%d' % i, denormalize(img, MEAN, STD))

optimizer.zero_grad()
logits = model(batch)
loss = F.cross_entropy(logits, labels)
loss.backward()
optimizer.step()
