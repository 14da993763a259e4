# label: hazard raises
# why: batch_images iterates the padded batch with zip(), which yields unbind views, and copy_ writes the grad-requiring input image into such a multi-output view, which autograd rejects when gradients w.r.t. the input are needed (adversarial attacks).
# source: https://github.com/pytorch/vision/issues/4153
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GeneralizedRCNNTransform(nn.Module):
    def __init__(self, min_size, image_mean, image_std, size_divisible=8):
        super().__init__()
        self.min_size = min_size
        self.image_mean = image_mean
        self.image_std = image_std
        self.size_divisible = size_divisible

    def normalize(self, image):
        dtype, device = image.dtype, image.device
        mean = torch.as_tensor(self.image_mean, dtype=dtype, device=device)
        std = torch.as_tensor(self.image_std, dtype=dtype, device=device)
        return (image - mean[:, None, None]) / std[:, None, None]

    def resize(self, image):
        h, w = image.shape[-2:]
        scale = self.min_size / min(h, w)
        return F.interpolate(image[None], scale_factor=scale, mode="bilinear", align_corners=False,
                             recompute_scale_factor=True)[0]

    def max_by_axis(self, the_list):
        maxes = the_list[0]
        for sublist in the_list[1:]:
            for index, item in enumerate(sublist):
                maxes[index] = max(maxes[index], item)
        return maxes

    def batch_images(self, images, size_divisible=32):
        max_size = self.max_by_axis([list(img.shape) for img in images])
        stride = float(size_divisible)
        max_size = list(max_size)
        max_size[1] = int(math.ceil(float(max_size[1]) / stride) * stride)
        max_size[2] = int(math.ceil(float(max_size[2]) / stride) * stride)

        batch_shape = [len(images)] + max_size
        batched_imgs = images[0].new_full(batch_shape, 0)
        for img, pad_img in zip(images, batched_imgs):
            pad_img[: img.shape[0], : img.shape[1], : img.shape[2]].copy_(img)  # <-- IPL001: in-place copy into an unbind view of the batch

        return batched_imgs

    def forward(self, images):
        images = [img for img in images]
        for i in range(len(images)):
            image = self.normalize(images[i])
            images[i] = self.resize(image)
        image_sizes = [img.shape[-2:] for img in images]
        images = self.batch_images(images, size_divisible=self.size_divisible)
        return images, image_sizes


class TinyDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.transform = GeneralizedRCNNTransform(8, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
        self.backbone = nn.Sequential(nn.Conv2d(3, 4, 3, 2, 1), nn.ReLU())
        self.cls_logits = nn.Conv2d(4, 2, 1)

    def forward(self, images):
        batched, image_sizes = self.transform(images)
        return self.cls_logits(self.backbone(batched))


model = TinyDetector().eval()
# FGSM-style attack: gradients of the detection score w.r.t. the input images
x_adv = [torch.rand(3, 10, 12, requires_grad=True), torch.rand(3, 12, 9, requires_grad=True)]
logits = model(x_adv)
loss = logits[:, 1].sum()
loss.backward()
grads = [x.grad for x in x_adv]
