# label: safe
# why: after the fix get_parameters hands every module clones of the node outputs and labels, so the in-place box conversion, the cm[...] += 1 counts and the detection_cm += state update only touch tensors the metric owns
# source: https://github.com/luxonis/luxonis-train/pull/174 (commit 6d5031bb "clone target"; luxonis_train/attached_modules/metrics/confusion_matrix.py)
import torch
from torch import Tensor

torch.manual_seed(0)


def box_convert(boxes: Tensor, in_fmt: str, out_fmt: str) -> Tensor:
    assert in_fmt == "xywh" and out_fmt == "xyxy"
    x, y, w, h = boxes.unbind(-1)
    return torch.stack([x, y, x + w, y + h], dim=-1)


def box_iou(boxes1: Tensor, boxes2: Tensor) -> Tensor:
    area1 = (boxes1[:, 2] - boxes1[:, 0]) * (boxes1[:, 3] - boxes1[:, 1])
    area2 = (boxes2[:, 2] - boxes2[:, 0]) * (boxes2[:, 3] - boxes2[:, 1])
    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter / (area1[:, None] + area2 - inter)


class ConfusionMatrix:
    def __init__(self, n_classes, original_in_shape, iou_threshold=0.45, confidence_threshold=0.25):
        self.n_classes = n_classes
        self.original_in_shape = original_in_shape
        self.iou_threshold = iou_threshold
        self.confidence_threshold = confidence_threshold
        self.detection_cm = torch.zeros(self.n_classes + 1, self.n_classes + 1, dtype=torch.int64)

    def update(self, predictions: list[Tensor], target: Tensor) -> None:
        if self.detection_cm is not None:
            assert isinstance(predictions, list)
            target[..., 2:6] = box_convert(target[..., 2:6], "xywh", "xyxy")
            scale_factors = torch.tensor(
                [
                    self.original_in_shape[2],
                    self.original_in_shape[1],
                    self.original_in_shape[2],
                    self.original_in_shape[1],
                ],
                device=target.device,
            )
            target[..., 2:6] *= scale_factors

            self.detection_cm += self._compute_detection_confusion_matrix(
                predictions,
                target,
            )
            return

    def _compute_detection_confusion_matrix(self, preds: list[Tensor], targets: Tensor) -> Tensor:
        cm = torch.zeros(self.n_classes + 1, self.n_classes + 1, dtype=torch.int64, device=preds[0].device)

        for img_idx, pred in enumerate(preds):
            img_targets = targets[targets[:, 0] == img_idx]

            if img_targets.shape[0] == 0:
                for pred_class in pred[:, 5].int():
                    cm[pred_class, self.n_classes] += 1
                continue

            pred = pred[pred[:, 4] > self.confidence_threshold]
            pred_boxes = pred[:, :4]
            pred_classes = pred[:, 5].int()

            gt_boxes = img_targets[:, 2:]
            gt_classes = img_targets[:, 1].int()

            iou = box_iou(gt_boxes, pred_boxes)
            iou_max, pred_max_idx = torch.max(iou, dim=1)
            iou_gt_mask = iou_max > self.iou_threshold
            gt_match_idx = torch.arange(len(gt_boxes), device=gt_boxes.device)[iou_gt_mask]
            pred_match_idx = pred_max_idx[iou_gt_mask]

            for gt_idx, pred_idx in zip(gt_match_idx, pred_match_idx):
                cm[pred_classes[pred_idx], gt_classes[gt_idx]] += 1

            unmatched_gt_mask = ~torch.isin(torch.arange(len(gt_boxes)), gt_match_idx)
            for gt_idx in torch.arange(len(gt_boxes))[unmatched_gt_mask]:
                cm[self.n_classes, gt_classes[gt_idx]] += 1

            unmatched_pred_mask = ~torch.isin(torch.arange(len(pred_boxes)), pred_match_idx)
            for pred_idx in torch.arange(len(pred_boxes))[unmatched_pred_mask]:
                cm[pred_classes[pred_idx], self.n_classes] += 1

        return cm


def get_parameters(inputs: dict, labels: dict) -> dict:
    # BaseAttachedModule.get_parameters, reduced: match node outputs and labels to the update() signature
    predictions = {"predictions": inputs["boundingbox"]}
    targets = {"target": labels["boundingbox"]}
    kwargs = predictions | targets

    for key, val in kwargs.items():
        if isinstance(val, Tensor):
            kwargs[key] = val.clone()
        elif isinstance(val, list):
            for i, item in enumerate(val):
                if isinstance(item, Tensor):
                    val[i] = item.clone()

    return kwargs


def bbox_visualizer(labels: dict, image_size) -> Tensor:
    # draws ground-truth boxes: normalized xywh label -> pixel xyxy
    h, w = image_size
    gt = labels["boundingbox"]
    return box_convert(gt[:, 2:6], "xywh", "xyxy") * torch.tensor([w, h, w, h])


original_in_shape = (3, 32, 48)
labels = {
    "boundingbox": torch.tensor([[0.0, 0.0, 0.10, 0.20, 0.25, 0.30],
                                 [0.0, 1.0, 0.50, 0.40, 0.30, 0.40],
                                 [1.0, 0.0, 0.30, 0.30, 0.40, 0.40]]),
}
outputs = {
    "boundingbox": [torch.tensor([[5.0, 6.5, 17.0, 16.0, 0.9, 0.0],
                                  [24.5, 13.0, 38.0, 26.0, 0.8, 1.0]]),
                    torch.tensor([[14.0, 9.5, 34.0, 22.5, 0.7, 0.0]])],
}

metric = ConfusionMatrix(n_classes=2, original_in_shape=original_in_shape)
metric.update(**get_parameters(outputs, labels))  # validation step: metrics first
drawn_gt_boxes = bbox_visualizer(labels, original_in_shape[1:])  # then visualizers, same labels dict
detection_cm = metric.detection_cm.clone()
