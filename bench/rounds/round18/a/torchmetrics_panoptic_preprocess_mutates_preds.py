# label: hazard silent
# why: _prepocess_inputs flattens the caller's preds/target with torch.flatten (a view) and then resets stuff instance IDs and unknown categories in place, so the user's prediction tensor is silently rewritten and later uses of it (here a semantic accuracy) change.
# source: https://github.com/Lightning-AI/torchmetrics/commit/9a0de2e45a13e9dc3cbb14b712bd8396d4f3c72f
from typing import Dict, List, Set, Tuple

import torch
from torch import Tensor

torch.manual_seed(0)


def _isin(arr: Tensor, values: List) -> Tensor:
    return (arr[..., None] == arr.new(values)).any(-1)


def _get_color_areas(inputs: Tensor) -> Dict[Tuple, Tensor]:
    unique_keys, unique_keys_area = torch.unique(inputs, dim=0, return_counts=True)
    return dict(zip([tuple(k.tolist()) for k in unique_keys], unique_keys_area))


def _prepocess_inputs(things: Set[int], stuffs: Set[int], inputs: Tensor, void_color: Tuple[int, int], allow_unknown_category: bool) -> Tensor:
    # flatten the spatial dimensions of the input tensor, e.g., (B, H, W, C) -> (B, H*W, C).
    inputs = torch.flatten(inputs, 1, -2)
    mask_stuffs = _isin(inputs[:, :, 0], list(stuffs))
    mask_things = _isin(inputs[:, :, 0], list(things))
    # reset instance IDs of stuffs
    mask_stuffs_instance = torch.stack([torch.zeros_like(mask_stuffs), mask_stuffs], dim=-1)
    inputs[mask_stuffs_instance] = 0  # <-- IPL004: writes through the flatten view into the caller's preds/target
    if not allow_unknown_category and not torch.all(mask_things | mask_stuffs):
        raise ValueError("Unknown categories found.")
    # set unknown categories to void color
    inputs[~(mask_things | mask_stuffs)] = inputs.new(void_color)  # <-- IPL004: also rewrites the caller's tensor in place
    return inputs


def _panoptic_quality_update_sample(flatten_preds, flatten_target, cat_id_to_continuous_id, void_color):
    n_categories = len(cat_id_to_continuous_id)
    iou_sum = torch.zeros(n_categories, dtype=torch.double)
    true_positives = torch.zeros(n_categories, dtype=torch.int)
    false_positives = torch.zeros(n_categories, dtype=torch.int)
    false_negatives = torch.zeros(n_categories, dtype=torch.int)
    pred_areas = _get_color_areas(flatten_preds)
    target_areas = _get_color_areas(flatten_target)
    intersection_areas = {}
    for key, area in _get_color_areas(torch.cat((flatten_preds, flatten_target), -1)).items():
        intersection_areas[((key[0], key[1]), (key[2], key[3]))] = area
    pred_segment_matched, target_segment_matched = set(), set()
    for (pred_color, target_color), intersection in intersection_areas.items():
        if target_color == void_color or pred_color[0] != target_color[0]:
            continue
        continuous_id = cat_id_to_continuous_id[pred_color[0]]
        union = pred_areas[pred_color] + target_areas[target_color] - intersection
        iou = intersection / union
        if iou > 0.5:
            pred_segment_matched.add(pred_color)
            target_segment_matched.add(target_color)
            iou_sum[continuous_id] += iou
            true_positives[continuous_id] += 1
    for target_color in set(target_areas.keys()).difference(target_segment_matched) - {void_color}:
        false_negatives[cat_id_to_continuous_id[target_color[0]]] += 1
    for pred_color in set(pred_areas.keys()).difference(pred_segment_matched) - {void_color}:
        false_positives[cat_id_to_continuous_id[pred_color[0]]] += 1
    return iou_sum, true_positives, false_positives, false_negatives


class PanopticQuality:
    def __init__(self, things, stuffs, allow_unknown_preds_category=True):
        self.things, self.stuffs = set(things), set(stuffs)
        self.void_color = (max(self.things | self.stuffs) + 1, 0)
        self.cat_id_to_continuous_id = {c: i for i, c in enumerate(sorted(self.things | self.stuffs))}
        self.allow_unknown_preds_category = allow_unknown_preds_category
        self.iou_sum = torch.zeros(len(self.cat_id_to_continuous_id), dtype=torch.double)
        self.true_positives = torch.zeros(len(self.cat_id_to_continuous_id), dtype=torch.int)
        self.false_positives = torch.zeros_like(self.true_positives)
        self.false_negatives = torch.zeros_like(self.true_positives)

    def update(self, preds, target):
        flatten_preds = _prepocess_inputs(self.things, self.stuffs, preds, self.void_color, self.allow_unknown_preds_category)
        flatten_target = _prepocess_inputs(self.things, self.stuffs, target, self.void_color, True)
        for p, t in zip(flatten_preds, flatten_target):
            iou_sum, tp, fp, fn = _panoptic_quality_update_sample(p, t, self.cat_id_to_continuous_id, self.void_color)
            self.iou_sum += iou_sum
            self.true_positives += tp
            self.false_positives += fp
            self.false_negatives += fn

    def compute(self):
        denominator = (self.true_positives + 0.5 * self.false_positives + 0.5 * self.false_negatives).double()
        pq = torch.where(denominator > 0.0, self.iou_sum / denominator, 0.0)
        return pq.mean()


# panoptic predictions from a segmentation head: (category_id, instance_id) per pixel
logits = torch.randn(2, 5, 6, 6)
category = logits.argmax(1)
instance = (torch.arange(36).reshape(6, 6) // 9).expand(2, 6, 6)
preds = torch.stack([category, instance], dim=-1)
target = preds.clone()
target[0, :2, :, 0] = 1

panoptic_quality = PanopticQuality(things={0, 1}, stuffs={2, 3})
panoptic_quality.update(preds, target)
pq = panoptic_quality.compute()

# semantic accuracy and instance statistics computed from the same predictions afterwards
semantic_acc = (preds[..., 0] == target[..., 0]).float().mean()
num_instances = preds[..., 1].float().sum()
