# label: hazard silent
# why: the bbox path of AugmentationSequential converts and transforms the caller's boxes tensor in place, so the ground-truth boxes the caller keeps are silently replaced by augmented ones.
# source: https://github.com/kornia/kornia/issues/1538
import torch

torch.manual_seed(0)


def _transform_boxes(boxes, mode):
    if mode == "xywh":
        boxes[..., 2] = boxes[..., 0] + boxes[..., 2]  # <-- IPL004: converts the caller's boxes in place
        boxes[..., 3] = boxes[..., 1] + boxes[..., 3]  # <-- IPL004: converts the caller's boxes in place
    return boxes


def transform_points(trans_01, points_1):
    points_h = torch.cat([points_1, torch.ones_like(points_1[..., :1])], -1)
    points_0 = points_h @ trans_01.transpose(-1, -2)
    return points_0[..., :2] / points_0[..., 2:3]


def transform_bbox(trans_mat, boxes, mode="xyxy"):
    boxes = _transform_boxes(boxes, mode)
    boxes[..., :2] = transform_points(trans_mat, boxes[..., :2])  # <-- IPL004: writes transformed corners into the caller's boxes
    boxes[..., 2:] = transform_points(trans_mat, boxes[..., 2:])  # <-- IPL004: writes transformed corners into the caller's boxes
    return boxes


class RandomHorizontalFlip:
    def __init__(self, width):
        self.width = width

    def compute_transformation(self, input):
        flip = torch.tensor([[-1.0, 0.0, self.width - 1], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
        return flip.expand(input.shape[0], 3, 3)

    def apply_transform(self, input, transform):
        return input.flip(-1)


class AugmentationSequential:
    def __init__(self, *augs, data_keys=("input", "bbox_xywh")):
        self.augs = augs
        self.data_keys = data_keys

    def __call__(self, *args):
        outputs = list(args)
        for aug in self.augs:
            mat = aug.compute_transformation(outputs[0])
            for idx, key in enumerate(self.data_keys):
                if key == "input":
                    outputs[idx] = aug.apply_transform(outputs[idx], mat)
                elif key == "bbox_xywh":
                    outputs[idx] = transform_bbox(mat, outputs[idx], mode="xywh")
        return outputs


aug = AugmentationSequential(RandomHorizontalFlip(8), data_keys=("input", "bbox_xywh"))
image = torch.rand(2, 3, 8, 8)
boxes = torch.tensor([[[1.0, 1.0, 3.0, 2.0]], [[4.0, 2.0, 2.0, 4.0]]])
out_image, out_boxes = aug(image, boxes)
gt_area = boxes[..., 2] * boxes[..., 3]
