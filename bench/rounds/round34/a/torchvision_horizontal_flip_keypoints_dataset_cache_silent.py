# label: hazard silent
# why: horizontal_flip_keypoints in the KeyPoints PR first flipped in place (`keypoints[..., 0] = keypoints[..., 0].sub_(...).neg_()` on `keypoints.reshape(-1, 2)`); called from a dataset's __getitem__ on the keypoints the dataset keeps in memory, every flipped sample overwrites the cached annotation, so a later epoch (and the un-augmented validation pass) reads mirrored targets. The PR made it flip a clone.
# source: https://github.com/pytorch/vision/pull/8817
import torch
import torch.nn as nn
import torch.nn.functional as F


def horizontal_flip_image(image: torch.Tensor) -> torch.Tensor:
    return image.flip(-1)


def horizontal_flip_keypoints(keypoints: torch.Tensor, canvas_size: tuple):
    shape = keypoints.shape
    keypoints = keypoints.reshape(-1, 2)
    keypoints[..., 0] = keypoints[..., 0].sub_(canvas_size[1] - 1).neg_()  # <-- IPL004
    return keypoints.reshape(shape)


class RandomHorizontalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, image, keypoints, canvas_size):
        if torch.rand(1).item() < self.p:
            return horizontal_flip_image(image), horizontal_flip_keypoints(keypoints, canvas_size)
        return image, keypoints


class InMemoryPoseDataset:
    """Images and keypoint annotations held in RAM (as a small COCO-keypoints subset would be)."""

    def __init__(self, images, keypoints, transform=None):
        self.images = images
        self.keypoints = keypoints
        self.transform = transform
        self.canvas_size = tuple(images.shape[-2:])

    def __len__(self):
        return self.images.shape[0]

    def __getitem__(self, idx):
        image, keypoints = self.images[idx], self.keypoints[idx]
        if self.transform is not None:
            image, keypoints = self.transform(image, keypoints, self.canvas_size)
        return image, keypoints


class KeypointRegressor(nn.Module):
    def __init__(self, num_keypoints=3):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(2))
        self.fc = nn.Linear(8 * 4, num_keypoints * 2)
        self.num_keypoints = num_keypoints

    def forward(self, x):
        return self.fc(self.features(x).flatten(1)).view(-1, self.num_keypoints, 2)


def run_epoch(model, dataset):
    losses = []
    for idx in range(len(dataset)):
        image, keypoints = dataset[idx]
        pred = model(image[None])
        losses.append(F.smooth_l1_loss(pred[0], keypoints / 16.0))
    return torch.stack(losses).mean()


def main():
    torch.manual_seed(0)
    images = torch.rand(4, 3, 16, 16)
    keypoints = torch.tensor([[[2.0, 3.0], [10.0, 5.0], [6.0, 12.0]],
                              [[1.0, 1.0], [14.0, 2.0], [7.0, 9.0]],
                              [[4.0, 8.0], [11.0, 11.0], [3.0, 14.0]],
                              [[9.0, 2.0], [5.0, 6.0], [12.0, 13.0]]])
    train_set = InMemoryPoseDataset(images, keypoints, transform=RandomHorizontalFlip(p=0.5))
    val_set = InMemoryPoseDataset(images, keypoints)
    model = KeypointRegressor()
    train_loss = run_epoch(model, train_set) + run_epoch(model, train_set)
    train_loss.backward()
    with torch.no_grad():
        val_loss = run_epoch(model, val_set)
    grads = torch.cat([p.grad.flatten() for p in model.parameters()])
    return keypoints, train_loss, val_loss, grads


keypoints, train_loss, val_loss, grads = main()
print(float(train_loss), float(val_loss))
