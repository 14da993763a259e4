# label: hazard silent
# why: to_pil_image adds the channel dimension to a 2-D tensor with pic.unsqueeze_(0), silently reshaping the caller's predicted mask that is used afterwards.
# source: https://github.com/pytorch/vision/issues/760
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


def _is_tensor_image(img):
    return torch.is_tensor(img) and img.ndimension() in {2, 3}


def to_pil_image(pic, mode=None):
    """Convert a tensor to an HWC uint8 array (the PIL.Image.fromarray call is dropped)."""
    if not (isinstance(pic, np.ndarray) or _is_tensor_image(pic)):
        raise TypeError("pic should be Tensor or ndarray. Got {}.".format(type(pic)))
    if isinstance(pic, torch.Tensor):
        if pic.ndimension() not in {2, 3}:
            raise ValueError("pic should be 2/3 dimensional. Got {} dimensions.".format(pic.ndimension()))
        elif pic.ndimension() == 2:
            # if 2D image, add channel dimension (CHW)
            pic.unsqueeze_(0)  # <-- IPL004: reshapes the caller's tensor
    npimg = pic
    if isinstance(pic, torch.FloatTensor):
        pic = pic.mul(255).byte()
    if isinstance(pic, torch.Tensor):
        npimg = np.transpose(pic.numpy(), (1, 2, 0))
    return npimg


segnet = nn.Sequential(nn.Conv2d(3, 1, 3, 1, 1), nn.Sigmoid())
img = torch.rand(1, 3, 6, 6)
with torch.no_grad():
    probs = segnet(img)[0, 0]
saved = to_pil_image(probs)
masks = [probs]
mask_stack = torch.stack([probs, 1 - probs])
mask_sum = probs.sum(0)
