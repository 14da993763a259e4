# label: hazard raises
# why: BatchRandomGrayScale returns an expanded (stride-0) tensor and the following Normalize runs sub_/div_ in place on it, which torch refuses because several elements share one memory location.
# source: https://github.com/juliendenize/torchaug/issues/10
import torch
import torch.nn as nn

torch.manual_seed(0)


def rgb_to_grayscale(img, num_output_channels=1):
    r, g, b = img.unbind(dim=-3)
    l_img = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype)
    l_img = l_img.unsqueeze(dim=-3)
    if num_output_channels == 3:
        return l_img.expand(img.shape)
    return l_img


def normalize(tensor, mean, std, inplace=False):
    if not inplace:
        tensor = tensor.clone()
    dtype = tensor.dtype
    mean = torch.as_tensor(mean, dtype=dtype, device=tensor.device)
    std = torch.as_tensor(std, dtype=dtype, device=tensor.device)
    if mean.ndim == 1:
        mean = mean.view(-1, 1, 1)
    if std.ndim == 1:
        std = std.view(-1, 1, 1)
    return tensor.sub_(mean).div_(std)  # <-- IPL004: in-place normalize of an input that is an expanded, memory-overlapping view


class BatchRandomGrayScale(nn.Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        self.p = p
        self.inplace = inplace

    def forward(self, imgs):
        if self.p == 0:
            return imgs
        elif self.p == 1:
            # the whole batch is converted: return the expanded result directly (no copy)
            return rgb_to_grayscale(imgs, num_output_channels=3)
        indices_do_apply = torch.rand(imgs.shape[0]) < self.p
        output = imgs if self.inplace else imgs.clone()
        output[indices_do_apply] = rgb_to_grayscale(output[indices_do_apply], num_output_channels=3)
        return output


class Normalize(nn.Module):
    def __init__(self, mean, std, inplace=True):
        super().__init__()
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def forward(self, tensor):
        return normalize(tensor, self.mean, self.std, self.inplace)


class BatchImageWrapper(nn.Module):
    def __init__(self, transforms):
        super().__init__()
        self.transforms = nn.ModuleList(transforms)

    def forward(self, tensor):
        for transform in self.transforms:
            tensor = transform(tensor)
        return tensor


transform = BatchImageWrapper([
    BatchRandomGrayScale(1.),  # Call expand
    Normalize(225, 225),
])

out = transform(torch.randn(4, 3, 8, 8))
