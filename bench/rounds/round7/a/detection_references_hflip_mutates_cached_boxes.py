# label: hazard silent
# why: RandomHorizontalFlip writes the flipped coordinates into target["boxes"] in place, which is the tensor the in-memory dataset keeps, so every flip silently corrupts the cached annotations used in later epochs.
# source: https://github.com/pytorch/vision/pull/5289
import torch

torch.manual_seed(0)


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, image, target):
        for t in self.transforms:
            image, target = t(image, target)
        return image, target


class RandomHorizontalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, image, target=None):
        if torch.rand(1) < self.p:
            image = image.flip(-1)
            if target is not None:
                width = image.shape[-1]
                bbox = target["boxes"]
                bbox[:, [0, 2]] = width - bbox[:, [2, 0]]  # <-- IPL004, IPL002: bbox is the dataset's cached boxes tensor
                target["boxes"] = bbox
                if "masks" in target:
                    target["masks"] = target["masks"].flip(-1)
        return image, target


class InMemoryDetectionDataset:
    def __init__(self, images, boxes, labels, transforms=None):
        self.images = images
        self.boxes = boxes
        self.labels = labels
        self.transforms = transforms

    def __len__(self):
        return len(self.images)

    def __getitem__(self, idx):
        image = self.images[idx]
        target = {"boxes": self.boxes[idx], "labels": self.labels[idx], "image_id": idx}
        if self.transforms is not None:
            image, target = self.transforms(image, target)
        return image, target


images = [torch.rand(3, 10, 20) for _ in range(2)]
boxes = [torch.tensor([[2.0, 1.0, 6.0, 5.0]]), torch.tensor([[10.0, 2.0, 18.0, 9.0], [0.0, 0.0, 4.0, 4.0]])]
labels = [torch.tensor([1]), torch.tensor([2, 3])]
dataset = InMemoryDetectionDataset(images, boxes, labels, transforms=Compose([RandomHorizontalFlip(p=1.0)]))

seen_boxes = []
for epoch in range(2):
    for idx in range(len(dataset)):
        image, target = dataset[idx]
        seen_boxes.append(target["boxes"].clone())
epoch2_boxes = torch.cat(seen_boxes[2:])
cached_boxes = torch.cat(dataset.boxes)
