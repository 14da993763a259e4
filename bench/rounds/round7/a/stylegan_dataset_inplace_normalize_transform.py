# label: safe
# why: Normalize(inplace=True) runs right after ToTensor, which always hands it a freshly allocated tensor, so the in-place normalization touches nothing that anyone else holds.
# source: https://github.com/rosinality/style-based-gan-pytorch/pull/38
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.RandomState(0)


class ToTensor:
    def __call__(self, pic):
        return torch.from_numpy(pic.transpose((2, 0, 1)).astype(np.float32) / 255.0)


class Normalize:
    def __init__(self, mean, std, inplace=False):
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def __call__(self, tensor):
        if not self.inplace:
            tensor = tensor.clone()
        mean = torch.as_tensor(self.mean, dtype=tensor.dtype)
        std = torch.as_tensor(self.std, dtype=tensor.dtype)
        tensor.sub_(mean[:, None, None]).div_(std[:, None, None])
        return tensor


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class MultiResolutionDataset:
    def __init__(self, images, transform):
        self.images = images
        self.transform = transform

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        return self.transform(self.images[index])


transform = Compose([
    ToTensor(),
    Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5), inplace=True),
])
images = [rng.randint(0, 256, size=(8, 8, 3)).astype(np.uint8) for _ in range(4)]
dataset = MultiResolutionDataset(images, transform)

discriminator = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(4 * 64, 1))
real_image = torch.stack([dataset[i] for i in range(len(dataset))])
real_predict = discriminator(real_image)
real_loss = F.softplus(-real_predict).mean()
real_loss.backward()
first_image_again = dataset[0]
