# label: hazard raises
# why: the detector's batch_images pads the super-resolved images by iterating over a new_full batch tensor (an unbind, i.e. a multi-view op) and copy_-ing each SR image, which requires grad, into those views in place; autograd refuses that in-place write.
# source: https://github.com/Jakaria08/EESRGAN/issues/25
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GeneralizedRCNNTransform(nn.Module):
    def __init__(self, image_mean, image_std, size_divisible=8):
        super().__init__()
        self.image_mean = image_mean
        self.image_std = image_std
        self.size_divisible = size_divisible

    def normalize(self, image):
        dtype, device = image.dtype, image.device
        mean = torch.as_tensor(self.image_mean, dtype=dtype, device=device)
        std = torch.as_tensor(self.image_std, dtype=dtype, device=device)
        return (image - mean[:, None, None]) / std[:, None, None]

    def max_by_axis(self, the_list):
        maxes = the_list[0]
        for sublist in the_list[1:]:
            for index, item in enumerate(sublist):
                maxes[index] = max(maxes[index], item)
        return maxes

    def batch_images(self, images, size_divisible=8):
        max_size = self.max_by_axis([list(img.shape) for img in images])
        stride = float(size_divisible)
        max_size = list(max_size)
        max_size[1] = int(math.ceil(float(max_size[1]) / stride) * stride)
        max_size[2] = int(math.ceil(float(max_size[2]) / stride) * stride)
        batch_shape = [len(images)] + max_size
        batched_imgs = images[0].new_full(batch_shape, 0)
        for img, pad_img in zip(images, batched_imgs):
            pad_img[: img.shape[0], : img.shape[1], : img.shape[2]].copy_(img)  # <-- IPL001: in-place copy into a view produced by iterating (unbinding) the batch tensor
        return batched_imgs

    def forward(self, images, targets=None):
        images = [img for img in images]
        for i in range(len(images)):
            images[i] = self.normalize(images[i])
        image_sizes = [img.shape[-2:] for img in images]
        images = self.batch_images(images, size_divisible=self.size_divisible)
        return images, image_sizes, targets


class TinyFRCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.transform = GeneralizedRCNNTransform([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
        self.backbone = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU())
        self.rpn_head = nn.Conv2d(4, 3, 1)

    def forward(self, images, targets):
        images, image_sizes, targets = self.transform(images, targets)
        features = self.backbone(images)
        objectness = self.rpn_head(features)
        loss_objectness = F.binary_cross_entropy_with_logits(objectness, torch.stack([t["objectness"] for t in targets]))
        return {"loss_objectness": loss_objectness}


class RRDBNetLite(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_first = nn.Conv2d(3, 8, 3, padding=1)
        self.upconv = nn.Conv2d(8, 8, 3, padding=1)
        self.conv_last = nn.Conv2d(8, 3, 3, padding=1)
        self.lrelu = nn.LeakyReLU(0.2)

    def forward(self, x):
        fea = self.lrelu(self.conv_first(x))
        fea = self.lrelu(self.upconv(F.interpolate(fea, scale_factor=2, mode="nearest")))
        return self.conv_last(fea)


netG = RRDBNetLite()
netFRCNN = TinyFRCNN()
var_L = torch.rand(2, 3, 4, 4)
targets = [{"objectness": torch.rand(3, 8, 8).round()} for _ in range(2)]
fake_H = netG(var_L)
intermediate_img = fake_H
img_count = intermediate_img.size()[0]
intermediate_img = [intermediate_img[i] for i in range(img_count)]
loss_dict = netFRCNN(intermediate_img, targets)
losses = sum(loss for loss in loss_dict.values())
losses.backward()
