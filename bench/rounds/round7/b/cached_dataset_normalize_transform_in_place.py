# label: hazard silent
# why: the old tensor Normalize transform subtracts and divides each channel in place, so the images cached in the dataset are normalized again on every epoch and the model sees drifting inputs.
# source: https://github.com/pytorch/vision/pull/520
import torch
import torch.nn as nn

torch.manual_seed(0)


def _is_tensor_image(img):
    return torch.is_tensor(img) and img.ndimension() == 3


def normalize(tensor, mean, std):
    if not _is_tensor_image(tensor):
        raise TypeError('tensor is not a torch image.')
    # TODO: make efficient
    for t, m, s in zip(tensor, mean, std):
        t.sub_(m).div_(s)  # <-- IPL004: normalizes the caller's (cached) image in place
    return tensor


class Normalize(object):
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, tensor):
        return normalize(tensor, self.mean, self.std)


class Compose(object):
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class CachedImageDataset(object):
    """Keeps decoded image tensors in memory and applies the transform on access."""

    def __init__(self, images, labels, transform=None):
        self.images = images
        self.labels = labels
        self.transform = transform

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        img, target = self.images[index], self.labels[index]
        if self.transform is not None:
            img = self.transform(img)
        return img, target


transform = Compose([Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])
dataset = CachedImageDataset([torch.rand(3, 4, 4) for _ in range(4)], [0, 1, 0, 1], transform)
model = nn.Sequential(nn.Flatten(), nn.Linear(48, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
epoch_losses = []
for epoch in range(2):
    running = 0.0
    for index in range(len(dataset)):
        img, target = dataset[index]
        loss = nn.functional.cross_entropy(model(img.unsqueeze(0)), torch.tensor([target]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running = running + loss.detach()
    epoch_losses.append(running)
epoch_losses = torch.stack(epoch_losses)
first_image = dataset.images[0]
