# label: hazard silent
# why: in "xywh" mode transform_bbox converts the caller's boxes to xyxy by writing into them in place, so the second augmentation view is computed from already-converted boxes.
# source: https://github.com/kornia/kornia/pull/4129
import torch

torch.manual_seed(0)


def transform_points(trans_01, points_1):
    # points_1: (B, N, 2); trans_01: (B, 3, 3)
    points_1_h = torch.nn.functional.pad(points_1, [0, 1], "constant", 1.0)
    points_0_h = torch.bmm(points_1_h, trans_01.transpose(1, 2))
    z_vec = points_0_h[..., -1:]
    return points_0_h[..., :-1] / z_vec


def transform_bbox(trans_mat, boxes, mode="xyxy", restore_coordinates=None):
    if mode not in ("xyxy", "xywh"):
        raise ValueError(f"Mode must be one of 'xyxy', 'xywh'. Got {mode}.")

    # convert boxes to format xyxy
    if mode == "xywh":
        boxes[..., -2] = boxes[..., 0] + boxes[..., -2]  # x + w  # <-- IPL004: writes into the caller's boxes
        boxes[..., -1] = boxes[..., 1] + boxes[..., -1]  # y + h  # <-- IPL004: writes into the caller's boxes

    transformed_boxes = transform_points(trans_mat, boxes.view(boxes.shape[0], -1, 2))
    transformed_boxes = transformed_boxes.view_as(boxes)

    if (restore_coordinates is None and mode == "xyxy") or restore_coordinates:
        restored_boxes = transformed_boxes.clone()
        restored_boxes[..., 0] = torch.min(transformed_boxes[..., [0, 2]], dim=-1)[0]
        restored_boxes[..., 1] = torch.min(transformed_boxes[..., [1, 3]], dim=-1)[0]
        restored_boxes[..., 2] = torch.max(transformed_boxes[..., [0, 2]], dim=-1)[0]
        restored_boxes[..., 3] = torch.max(transformed_boxes[..., [1, 3]], dim=-1)[0]
        transformed_boxes = restored_boxes

    if mode == "xywh":
        transformed_boxes[..., 2] = transformed_boxes[..., 2] - transformed_boxes[..., 0]
        transformed_boxes[..., 3] = transformed_boxes[..., 3] - transformed_boxes[..., 1]

    return transformed_boxes


def random_affine(batch_size, generator):
    angle = torch.rand(batch_size, generator=generator) * 0.5
    trans = torch.eye(3).repeat(batch_size, 1, 1)
    trans[:, 0, 0] = torch.cos(angle)
    trans[:, 0, 1] = -torch.sin(angle)
    trans[:, 1, 0] = torch.sin(angle)
    trans[:, 1, 1] = torch.cos(angle)
    trans[:, :2, 2] = torch.rand(batch_size, 2, generator=generator) * 4
    return trans


g = torch.Generator().manual_seed(0)
boxes_xywh = torch.tensor([[[2.0, 3.0, 4.0, 5.0], [1.0, 1.0, 2.0, 2.0]]])
view1_mat = random_affine(1, g)
view2_mat = random_affine(1, g)
boxes_view1 = transform_bbox(view1_mat, boxes_xywh, mode="xywh", restore_coordinates=True)
boxes_view2 = transform_bbox(view2_mat, boxes_xywh, mode="xywh", restore_coordinates=True)
