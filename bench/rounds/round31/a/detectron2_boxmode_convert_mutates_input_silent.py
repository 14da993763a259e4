# label: hazard silent
# why: before the fix BoxMode.convert did `arr = box` for array/tensor input and then converted with `arr[:, 2] -= arr[:, 0]` etc., rewriting the caller's boxes; COCOEvaluator's instances_to_coco_json converts the model's pred_boxes this way, so the next evaluator in DatasetEvaluators (here a VOC-style IoU evaluator) silently scores XYWH boxes as if they were XYXY.
# source: https://github.com/facebookresearch/detectron2/commit/27f337a74405038e7d258833fb103058be3aa050
from enum import Enum, unique

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@unique
class BoxMode(Enum):
    XYXY_ABS = 0
    XYWH_ABS = 1
    XYXY_REL = 2
    XYWH_REL = 3

    @staticmethod
    def convert(box, from_mode, to_mode):
        if from_mode == to_mode:
            return box

        original_type = type(box)
        single_box = isinstance(box, (list, tuple))
        if single_box:
            arr = torch.tensor(box, dtype=torch.float32)
            assert arr.shape == (4,), "BoxMode.convert takes either a 4-tuple/list or a Nx4 array/tensor"
        else:
            arr = box

        assert to_mode.value < 2 and from_mode.value < 2, "Relative mode not yet supported!"

        original_shape = arr.shape
        arr = arr.reshape(-1, 4)
        if to_mode == BoxMode.XYXY_ABS and from_mode == BoxMode.XYWH_ABS:
            arr[:, 2] += arr[:, 0]  # <-- IPL004
            arr[:, 3] += arr[:, 1]  # <-- IPL004
        elif from_mode == BoxMode.XYXY_ABS and to_mode == BoxMode.XYWH_ABS:
            arr[:, 2] -= arr[:, 0]  # <-- IPL004
            arr[:, 3] -= arr[:, 1]  # <-- IPL004
        else:
            raise RuntimeError("Cannot be here!")
        if single_box:
            return original_type(arr.flatten().tolist())
        return arr.reshape(*original_shape)


class Boxes:
    def __init__(self, tensor):
        self.tensor = tensor


class Instances:
    def __init__(self, image_size, **kwargs):
        self.image_size = image_size
        for k, v in kwargs.items():
            setattr(self, k, v)

    def __len__(self):
        return self.pred_boxes.tensor.shape[0]


def instances_to_coco_json(instances, img_id):
    num_instance = len(instances)
    if num_instance == 0:
        return []
    boxes = instances.pred_boxes.tensor  # the original does `.numpy()`, which shares this memory
    boxes = BoxMode.convert(boxes, BoxMode.XYXY_ABS, BoxMode.XYWH_ABS)
    boxes = boxes.tolist()
    scores = instances.scores.tolist()
    classes = instances.pred_classes.tolist()
    results = []
    for k in range(num_instance):
        results.append({"image_id": img_id, "category_id": classes[k], "bbox": boxes[k], "score": scores[k]})
    return results


class COCOEvaluator:
    def reset(self):
        self._predictions = []

    def process(self, inputs, outputs):
        for input, output in zip(inputs, outputs):
            prediction = {"image_id": input["image_id"]}
            instances = output["instances"]
            prediction["instances"] = instances_to_coco_json(instances, input["image_id"])
            self._predictions.append(prediction)

    def evaluate(self):
        return torch.tensor([p["bbox"] for pred in self._predictions for p in pred["instances"]])


def pairwise_iou(boxes1, boxes2):
    area1 = (boxes1[:, 2] - boxes1[:, 0]) * (boxes1[:, 3] - boxes1[:, 1])
    area2 = (boxes2[:, 2] - boxes2[:, 0]) * (boxes2[:, 3] - boxes2[:, 1])
    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area1[:, None] + area2 - inter)


class VOCStyleEvaluator:
    """Scores pred_boxes (expected XYXY_ABS) against the ground truth by IoU."""

    def reset(self):
        self._ious = []

    def process(self, inputs, outputs):
        for input, output in zip(inputs, outputs):
            pred = output["instances"].pred_boxes.tensor
            self._ious.append(pairwise_iou(pred, input["gt_boxes"]).max(dim=1).values)

    def evaluate(self):
        return torch.cat(self._ious)


class DatasetEvaluators:
    def __init__(self, evaluators):
        self._evaluators = evaluators

    def reset(self):
        for evaluator in self._evaluators:
            evaluator.reset()

    def process(self, inputs, outputs):
        for evaluator in self._evaluators:
            evaluator.process(inputs, outputs)

    def evaluate(self):
        return [evaluator.evaluate() for evaluator in self._evaluators]


class BoxPredictor(nn.Module):
    """Stand-in detector head: regresses 3 XYXY boxes per image."""

    def __init__(self, num_boxes=3):
        super().__init__()
        self.num_boxes = num_boxes
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.bbox_pred = nn.Linear(8, num_boxes * 4)
        self.cls_score = nn.Linear(8, num_boxes)

    def forward(self, images):
        feats = self.backbone(images).flatten(1)
        deltas = self.bbox_pred(feats).view(-1, self.num_boxes, 4)
        xy = 16 + 8 * torch.tanh(deltas[..., :2])
        wh = 4 + 8 * torch.sigmoid(deltas[..., 2:])
        return torch.cat([xy, xy + wh], dim=-1), self.cls_score(feats)


def main():
    model = BoxPredictor()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    images = torch.rand(2, 3, 32, 32)
    gt_boxes = [torch.tensor([[10.0, 12.0, 20.0, 26.0], [15.0, 5.0, 30.0, 14.0]]), torch.tensor([[4.0, 4.0, 18.0, 20.0]])]

    # one training step
    pred_boxes, _ = model(images)
    loss = sum(F.smooth_l1_loss(pred_boxes[i, : len(g)], g) for i, g in enumerate(gt_boxes))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

    # inference_on_dataset with two evaluators
    model.eval()
    evaluator = DatasetEvaluators([COCOEvaluator(), VOCStyleEvaluator()])
    evaluator.reset()
    with torch.no_grad():
        boxes, logits = model(images)
        inputs = [{"image_id": i, "gt_boxes": g} for i, g in enumerate(gt_boxes)]
        outputs = [
            {"instances": Instances((32, 32), pred_boxes=Boxes(boxes[i]), scores=logits[i].sigmoid(), pred_classes=torch.zeros(3, dtype=torch.long))}
            for i in range(len(inputs))
        ]
        evaluator.process(inputs, outputs)
    coco_bbox, voc_ious = evaluator.evaluate()
    return loss.detach(), coco_bbox, voc_ious


train_loss, coco_bbox, voc_ious = main()
