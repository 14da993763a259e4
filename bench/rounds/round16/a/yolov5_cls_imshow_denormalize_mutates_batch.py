# label: hazard silent
# why: denormalize() writes x * std + mean back into the channels of the tensor it is given, so imshow_cls(images) turns the caller's normalized batch into [0, 1] pixels and the classifier evaluated afterwards sees un-normalized images.
# source: https://github.com/ultralytics/yolov5/commit/ebb99af9ac98ab09404ae473f1a3cdbeb4060e82
import torch
import torch.nn as nn

torch.manual_seed(0)

IMAGENET_MEAN = 0.485, 0.456, 0.406
IMAGENET_STD = 0.229, 0.224, 0.225


def denormalize(x, mean=IMAGENET_MEAN, std=IMAGENET_STD):
    # Denormalize RGB images x per ImageNet stats in BCHW format, i.e. = x * std + mean
    for i in range(3):
        x[:, i] = x[:, i] * std[i] + mean[i]  # <-- IPL004: rewrites the caller's image batch
    return x


def imshow_cls(im, labels=None, nmax=25):
    # returns the HWC tiles that would be drawn into the grid
    blocks = torch.chunk(denormalize(im).cpu().float(), len(im), dim=0)
    n = min(len(blocks), nmax)
    return [blocks[i].squeeze(0).permute((1, 2, 0)).clamp(0.0, 1.0) for i in range(n)]


classifier = nn.Sequential(
    nn.Conv2d(3, 8, 3, 2, 1),
    nn.BatchNorm2d(8),
    nn.SiLU(),
    nn.AdaptiveAvgPool2d(1),
    nn.Flatten(),
    nn.Linear(8, 5),
).eval()

raw = torch.rand(4, 3, 16, 16)
mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)
std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)
images = (raw - mean) / std
labels = torch.tensor([0, 1, 2, 3])

tiles = imshow_cls(images, labels)
with torch.no_grad():
    logits = classifier(images)
pred = logits.argmax(1)
probs = logits.softmax(1)
