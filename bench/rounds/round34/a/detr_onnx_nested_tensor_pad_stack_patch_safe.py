# label: safe
# why: PR #173's `_onnx_nested_tensor_from_tensor_list` pads every image with F.pad and stacks the results (the mask likewise), so the batched input is built without writing into unbind views of a preallocated tensor and the adversarial patch receives its gradient through DETR.
# source: https://github.com/facebookresearch/detr/pull/173
import math
from typing import List, Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def _max_by_axis(the_list):
    # type: (List[List[int]]) -> List[int]
    maxes = the_list[0]
    for sublist in the_list[1:]:
        for index, item in enumerate(sublist):
            maxes[index] = max(maxes[index], item)
    return maxes


class NestedTensor(object):
    def __init__(self, tensors, mask: Optional[Tensor]):
        self.tensors = tensors
        self.mask = mask

    def decompose(self):
        return self.tensors, self.mask


def _onnx_nested_tensor_from_tensor_list(tensor_list):
    max_size = []
    for i in range(tensor_list[0].dim()):
        max_size_i = torch.max(torch.stack([torch.as_tensor(img.shape[i]) for img in tensor_list]).to(torch.float32)).to(torch.int64)
        max_size.append(max_size_i)
    max_size = tuple(max_size)

    # work around for
    # pad_img[: img.shape[0], : img.shape[1], : img.shape[2]].copy_(img)
    # m[: img.shape[1], :img.shape[2]] = False
    # which is not yet supported in onnx
    padded_imgs = []
    padded_masks = []
    for img in tensor_list:
        padding = [int(s1 - s2) for s1, s2 in zip(max_size, tuple(img.shape))]
        padded_img = torch.nn.functional.pad(img, (0, padding[2], 0, padding[1], 0, padding[0]))
        padded_imgs.append(padded_img)

        m = torch.zeros_like(img[0], dtype=torch.int, device=img.device)
        padded_mask = torch.nn.functional.pad(m, (0, padding[2], 0, padding[1]), "constant", 1)
        padded_masks.append(padded_mask.to(torch.bool))

    tensor = torch.stack(padded_imgs)
    mask = torch.stack(padded_masks)

    return NestedTensor(tensor, mask=mask)


def nested_tensor_from_tensor_list(tensor_list: List[Tensor]):
    if tensor_list[0].ndim == 3:
        return _onnx_nested_tensor_from_tensor_list(tensor_list)
    raise ValueError('not supported')


class PositionEmbeddingSine(nn.Module):
    def __init__(self, num_pos_feats=64, temperature=10000, normalize=False, scale=None):
        super().__init__()
        self.num_pos_feats = num_pos_feats
        self.temperature = temperature
        self.normalize = normalize
        if scale is None:
            scale = 2 * math.pi
        self.scale = scale

    def forward(self, tensor_list: NestedTensor):
        x = tensor_list.tensors
        mask = tensor_list.mask
        not_mask = ~mask
        y_embed = not_mask.cumsum(1, dtype=torch.float32)
        x_embed = not_mask.cumsum(2, dtype=torch.float32)
        if self.normalize:
            eps = 1e-6
            y_embed = y_embed / (y_embed[:, -1:, :] + eps) * self.scale
            x_embed = x_embed / (x_embed[:, :, -1:] + eps) * self.scale
        dim_t = torch.arange(self.num_pos_feats, dtype=torch.float32, device=x.device)
        dim_t = self.temperature ** (2 * (dim_t // 2) / self.num_pos_feats)
        pos_x = x_embed[:, :, :, None] / dim_t
        pos_y = y_embed[:, :, :, None] / dim_t
        pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos_y = torch.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos = torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)
        return pos


class Joiner(nn.Module):
    def __init__(self, hidden_dim=16):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.Conv2d(8, 8, 3, 2, 1), nn.ReLU())
        self.position_embedding = PositionEmbeddingSine(hidden_dim // 2, normalize=True)

    def forward(self, tensor_list: NestedTensor):
        x = self.body(tensor_list.tensors)
        m = tensor_list.mask
        mask = F.interpolate(m[None].float(), size=x.shape[-2:]).to(torch.bool)[0]
        out = NestedTensor(x, mask)
        return out, self.position_embedding(out).to(x.dtype)


class DETR(nn.Module):
    def __init__(self, num_classes=3, num_queries=4, hidden_dim=16):
        super().__init__()
        self.backbone = Joiner(hidden_dim)
        self.input_proj = nn.Conv2d(8, hidden_dim, kernel_size=1)
        self.query_embed = nn.Embedding(num_queries, hidden_dim)
        self.class_embed = nn.Linear(hidden_dim, num_classes + 1)

    def forward(self, samples):
        if isinstance(samples, (list, torch.Tensor)):
            samples = nested_tensor_from_tensor_list(samples)
        features, pos = self.backbone(samples)
        src, mask = features.decompose()
        memory = (self.input_proj(src) + pos).flatten(2).transpose(1, 2)  # (b, hw, d)
        attn = torch.einsum('qd,bkd->bqk', self.query_embed.weight, memory)
        attn = attn.masked_fill(mask.flatten(1)[:, None, :], float('-inf')).softmax(-1)
        hs = torch.einsum('bqk,bkd->bqd', attn, memory)
        return {'pred_logits': self.class_embed(hs)}


def apply_patch(image, patch, top, left):
    pad = (left, image.shape[-1] - left - patch.shape[-1], top, image.shape[-2] - top - patch.shape[-2])
    patch_mask = F.pad(torch.ones_like(patch), pad)
    return image * (1 - patch_mask) + F.pad(patch, pad) * patch_mask


def main():
    torch.manual_seed(0)
    model = DETR()
    for p in model.parameters():
        p.requires_grad_(False)
    patch = torch.rand(3, 6, 6, requires_grad=True)
    images = [torch.rand(3, 20, 24), torch.rand(3, 24, 18)]
    samples = [apply_patch(img, patch, 2, 3) for img in images]
    outputs = model(samples)
    # push every query towards the "no object" class to hide the objects
    loss = -outputs['pred_logits'].log_softmax(-1)[..., -1].mean()
    loss.backward()
    return loss, patch.grad


loss, patch_grad = main()
print(float(loss))
