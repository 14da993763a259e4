# label: safe
# why: The PR's ImageList.from_tensors copies each image into `batched_imgs[i, ..., :h, :w]` (a plain slice of the fresh new_full canvas, not an unbind view), and the single-image path's `padded.unsqueeze_(0)` acts on F.pad's new tensor; the in-place writes touch only the new batch and carry gradients back to the images.
# source: https://github.com/facebookresearch/detectron2/pull/4291
import math
from typing import Any, List, Sequence, Tuple, Union

import torch
from torch import nn
from torch.nn import functional as F


class ImageList(object):
    def __init__(self, tensor: torch.Tensor, image_sizes: List[Tuple[int, int]]):
        self.tensor = tensor
        self.image_sizes = image_sizes

    def __len__(self) -> int:
        return len(self.image_sizes)

    def __getitem__(self, idx: Union[int, slice]) -> torch.Tensor:
        size = self.image_sizes[idx]
        return self.tensor[idx, ..., : size[0], : size[1]]

    def to(self, *args: Any, **kwargs: Any) -> "ImageList":
        cast_tensor = self.tensor.to(*args, **kwargs)
        return ImageList(cast_tensor, self.image_sizes)

    @staticmethod
    def from_tensors(
        tensors: Sequence[torch.Tensor], size_divisibility: int = 0, pad_value: float = 0.0
    ) -> "ImageList":
        assert len(tensors) > 0
        assert isinstance(tensors, (tuple, list))
        for t in tensors:
            assert isinstance(t, torch.Tensor), type(t)
            assert t.shape[1:-2] == tensors[0].shape[1:-2], t.shape
        # per dimension maximum (H, W) or (C_1, ..., C_K, H, W) where K >= 1 among all tensors
        max_size = tuple(max(s) for s in zip(*[img.shape for img in tensors]))

        if size_divisibility > 0:
            stride = size_divisibility
            max_size = list(max_size)
            max_size[-2] = int(math.ceil(max_size[-2] / stride) * stride)
            max_size[-1] = int(math.ceil(max_size[-1] / stride) * stride)
            max_size = tuple(max_size)

        image_sizes = [im.shape[-2:] for im in tensors]

        if len(tensors) == 1:
            # This seems slightly (2%) faster.
            image_size = image_sizes[0]
            padded = F.pad(
                tensors[0],
                [0, max_size[-1] - image_size[1], 0, max_size[-2] - image_size[0]],
                value=pad_value,
            )
            batched_imgs = padded.unsqueeze_(0)
        else:
            batch_shape = (len(tensors),) + max_size
            batched_imgs = tensors[0].new_full(batch_shape, pad_value)
            for i, img in enumerate(tensors):
                # Use `batched_imgs` directly instead of `img, pad_img = zip(tensors, batched_imgs)`
                # Tracing mode cannot capture `copy_()` of temporary locals
                batched_imgs[i, ..., : img.shape[-2], : img.shape[-1]].copy_(img)

        return ImageList(batched_imgs.contiguous(), image_sizes)


class TinyGeneralizedRCNN(nn.Module):
    def __init__(self, size_divisibility=8):
        super().__init__()
        self.register_buffer("pixel_mean", torch.tensor([0.485, 0.456, 0.406]).view(-1, 1, 1))
        self.register_buffer("pixel_std", torch.tensor([0.229, 0.224, 0.225]).view(-1, 1, 1))
        self.size_divisibility = size_divisibility
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.Conv2d(8, 8, 3, 2, 1))
        self.objectness = nn.Conv2d(8, 1, 1)

    def preprocess_image(self, batched_inputs):
        images = [x["image"] for x in batched_inputs]
        images = [(x - self.pixel_mean) / self.pixel_std for x in images]
        images = ImageList.from_tensors(images, self.size_divisibility)
        return images

    def forward(self, batched_inputs):
        images = self.preprocess_image(batched_inputs)
        features = self.backbone(images.tensor)
        logits = self.objectness(features)
        targets = torch.zeros_like(logits)
        return F.binary_cross_entropy_with_logits(logits, targets), images


def main():
    torch.manual_seed(0)
    model = TinyGeneralizedRCNN()
    single = [{"image": torch.rand(3, 16, 16, requires_grad=True)}]
    batch = [{"image": torch.rand(3, 13, 17, requires_grad=True)},
             {"image": torch.rand(3, 16, 12, requires_grad=True)}]
    loss_single, images_single = model(single)
    loss_batch, images_batch = model(batch)
    loss = loss_single + loss_batch
    loss.backward()
    image_grads = [d["image"].grad for d in single + batch]
    shapes = torch.tensor([list(d["image"].shape) for d in single + batch])
    return loss, images_single.tensor, images_batch.tensor, image_grads, shapes


loss, padded_single, padded_batch, image_grads, shapes = main()
print(float(loss), padded_single.shape, padded_batch.shape)
