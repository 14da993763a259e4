# label: hazard raises
# why: normalize subtracts the mean in place from the image the caller created with requires_grad=True for a saliency map, and in-place ops on such a leaf raise.
import torch
import torch.nn as nn

torch.manual_seed(0)

MEAN = torch.tensor([0.485, 0.456, 0.406])[:, None, None]
STD = torch.tensor([0.229, 0.224, 0.225])[:, None, None]

model = nn.Sequential(
    nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3)
)


def normalize(img):
    img.sub_(MEAN)  # <-- IPL003: img is a leaf that requires grad
    return img / STD


image = torch.rand(1, 3, 8, 8, requires_grad=True)
score = model(normalize(image))[0, 1]
score.backward()
saliency = image.grad.abs().amax(dim=1)
