# label: safe
# why: normalize only mutates when the caller opts in with inplace=True, and this caller does so on a batch it immediately rebinds and never reads raw again.
import torch
import torch.nn as nn

torch.manual_seed(0)

MEAN = torch.tensor([0.485, 0.456, 0.406])[:, None, None]
STD = torch.tensor([0.229, 0.224, 0.225])[:, None, None]


def normalize(img, mean, std, inplace=False):
    if not inplace:
        img = img.clone()
    img.sub_(mean)
    img.div_(std)
    return img


model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))
images = torch.rand(2, 3, 8, 8)
images = normalize(images, MEAN, STD, inplace=True)
logits = model(images)
loss = logits.pow(2).mean()
loss.backward()
