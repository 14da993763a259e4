# label: hazard silent
# why: in xywh mode transform_bbox converts the caller's boxes to xyxy by writing boxes[..., 2] and boxes[..., 3] in place, so the argument is silently rewritten and a second call on it compounds the error
# source: https://github.com/kornia/kornia/issues/4011 (fixed in https://github.com/kornia/kornia/pull/4129)
import torch

torch.manual_seed(0)


def convert_points_to_homogeneous(points):
    return torch.nn.functional.pad(points, [0, 1], "constant", 1.0)


def convert_points_from_homogeneous(points, eps=1e-8):
    z_vec = points[..., -1:]
    mask = torch.abs(z_vec) > eps
    scale = torch.where(mask, 1.0 / (z_vec + eps), torch.ones_like(z_vec))
    return scale * points[..., :-1]


def transform_points(trans_01, points_1):
    points_1_h = convert_points_to_homogeneous(points_1)
    points_0_h = torch.bmm(points_1_h, trans_01.permute(0, 2, 1))
    return convert_points_from_homogeneous(points_0_h)


def transform_bbox(trans_mat, boxes, mode="xyxy"):
    if not isinstance(mode, str):
        raise TypeError(f"Mode must be a string. Got {type(mode)}")
    if mode not in ("xyxy", "xywh"):
        raise ValueError(f"Mode must be one of 'xyxy', 'xywh'. Got {mode}")

    # convert boxes to format xyxy
    if mode == "xywh":
        boxes[..., 2] = boxes[..., 0] + boxes[..., 2]  # <-- IPL004: rewrites the caller's box tensor (x + w)
        boxes[..., 3] = boxes[..., 1] + boxes[..., 3]  # <-- IPL004: rewrites the caller's box tensor (y + h)

    transformed_boxes = transform_points(trans_mat, boxes.view(boxes.shape[0], -1, 2))
    transformed_boxes = transformed_boxes.view_as(boxes)

    if mode == "xywh":
        transformed_boxes[..., 2] = transformed_boxes[..., 2] - transformed_boxes[..., 0]
        transformed_boxes[..., 3] = transformed_boxes[..., 3] - transformed_boxes[..., 1]
    return transformed_boxes


bx = torch.tensor([[1.0, 1.0, 2.0, 1.0]])  # xywh: x=1, y=1, w=2, h=1
trans = torch.eye(3)[None]
trans[0, 0, 2] = 3.0  # translate x by 3
out_first = transform_bbox(trans, bx, mode="xywh")
out_second = transform_bbox(trans, bx, mode="xywh")
boxes_after = bx
