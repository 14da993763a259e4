# label: hazard silent
# why: OpenPCDet's boxes3d_lidar_to_kitti_camera takes `xyz_lidar = boxes3d_lidar[:, 0:3]` (a view) and moves the centre to the bottom with `xyz_lidar[:, 2] -= h.reshape(-1) / 2`; generate_prediction_dicts passes the detector's pred_boxes (on CPU `.cpu()` is the same storage) and afterwards stores `pred_dict['boxes_lidar'] = pred_boxes`, so every exported LiDAR box is shifted down by half its height (commit "fixbug: modify input args with return for box utils"; reduced with torch tensors where the original converts to numpy views of the same storage).
# source: https://github.com/open-mmlab/OpenPCDet/commit/86cf4edff4616751d863e2601174e401b0808ce7
import math

import torch
import torch.nn as nn


class Calibration(object):
    def __init__(self, P2, R0, V2C):
        self.P2 = P2  # 3 x 4
        self.R0 = R0  # 3 x 3
        self.V2C = V2C  # 3 x 4

    def cart_to_hom(self, pts):
        pts_hom = torch.cat((pts, torch.ones((pts.shape[0], 1), dtype=pts.dtype)), dim=1)
        return pts_hom

    def lidar_to_rect(self, pts_lidar):
        pts_lidar_hom = self.cart_to_hom(pts_lidar)
        pts_rect = pts_lidar_hom @ (self.V2C.T @ self.R0.T)
        return pts_rect

    def rect_to_img(self, pts_rect):
        pts_rect_hom = self.cart_to_hom(pts_rect)
        pts_2d_hom = pts_rect_hom @ self.P2.T
        pts_img = (pts_2d_hom[:, 0:2].T / pts_rect_hom[:, 2]).T  # (N, 2)
        pts_rect_depth = pts_2d_hom[:, 2] - self.P2.T[3, 2]  # depth in rect camera coord
        return pts_img, pts_rect_depth


def boxes3d_lidar_to_kitti_camera(boxes3d_lidar, calib):
    """
    :param boxes3d_lidar: (N, 7) [x, y, z, dx, dy, dz, heading], (x, y, z) is the box center
    :return: boxes3d_camera: (N, 7) [x, y, z, l, h, w, r] in rect camera coords
    """
    xyz_lidar = boxes3d_lidar[:, 0:3]
    l, w, h, r = boxes3d_lidar[:, 3:4], boxes3d_lidar[:, 4:5], boxes3d_lidar[:, 5:6], boxes3d_lidar[:, 6:7]

    xyz_lidar[:, 2] -= h.reshape(-1) / 2  # <-- IPL004
    xyz_cam = calib.lidar_to_rect(xyz_lidar)
    r = -r - math.pi / 2
    return torch.cat([xyz_cam, l, h, w, r], dim=-1)


def boxes3d_to_corners3d_kitti_camera(boxes3d, bottom_center=True):
    boxes_num = boxes3d.shape[0]
    l, h, w = boxes3d[:, 3], boxes3d[:, 4], boxes3d[:, 5]
    x_corners = torch.stack([l / 2., l / 2., -l / 2., -l / 2., l / 2., l / 2., -l / 2., -l / 2], dim=1)
    z_corners = torch.stack([w / 2., -w / 2., -w / 2., w / 2., w / 2., -w / 2., -w / 2., w / 2.], dim=1)
    if bottom_center:
        y_corners = torch.zeros((boxes_num, 8))
        y_corners[:, 4:8] = -h.reshape(boxes_num, 1).repeat(1, 4)  # (N, 8)
    else:
        y_corners = torch.stack([h / 2., h / 2., h / 2., h / 2., -h / 2., -h / 2., -h / 2., -h / 2.], dim=1)

    ry = boxes3d[:, 6]
    zeros, ones = torch.zeros_like(ry), torch.ones_like(ry)
    rot_list = torch.stack([torch.stack([torch.cos(ry), zeros, -torch.sin(ry)]),
                            torch.stack([zeros, ones, zeros]),
                            torch.stack([torch.sin(ry), zeros, torch.cos(ry)])])  # (3, 3, N)
    R_list = rot_list.permute(2, 0, 1)  # (N, 3, 3)

    temp_corners = torch.cat((x_corners.reshape(-1, 8, 1), y_corners.reshape(-1, 8, 1),
                              z_corners.reshape(-1, 8, 1)), dim=2)  # (N, 8, 3)
    rotated_corners = torch.matmul(temp_corners, R_list)  # (N, 8, 3)
    x_corners, y_corners, z_corners = rotated_corners[:, :, 0], rotated_corners[:, :, 1], rotated_corners[:, :, 2]

    x_loc, y_loc, z_loc = boxes3d[:, 0], boxes3d[:, 1], boxes3d[:, 2]
    x = x_loc.reshape(-1, 1) + x_corners.reshape(-1, 8)
    y = y_loc.reshape(-1, 1) + y_corners.reshape(-1, 8)
    z = z_loc.reshape(-1, 1) + z_corners.reshape(-1, 8)
    return torch.cat((x.reshape(-1, 8, 1), y.reshape(-1, 8, 1), z.reshape(-1, 8, 1)), dim=2)


def boxes3d_kitti_camera_to_imageboxes(boxes3d, calib, image_shape=None):
    corners3d = boxes3d_to_corners3d_kitti_camera(boxes3d)
    pts_img, _ = calib.rect_to_img(corners3d.reshape(-1, 3))
    corners_in_image = pts_img.reshape(-1, 8, 2)

    min_uv = torch.min(corners_in_image, dim=1)[0]  # (N, 2)
    max_uv = torch.max(corners_in_image, dim=1)[0]  # (N, 2)
    boxes2d_image = torch.cat([min_uv, max_uv], dim=1)
    if image_shape is not None:
        boxes2d_image[:, 0] = torch.clamp(boxes2d_image[:, 0], min=0, max=image_shape[1] - 1)
        boxes2d_image[:, 1] = torch.clamp(boxes2d_image[:, 1], min=0, max=image_shape[0] - 1)
        boxes2d_image[:, 2] = torch.clamp(boxes2d_image[:, 2], min=0, max=image_shape[1] - 1)
        boxes2d_image[:, 3] = torch.clamp(boxes2d_image[:, 3], min=0, max=image_shape[0] - 1)
    return boxes2d_image


class KittiDataset:
    @staticmethod
    def generate_prediction_dicts(batch_dict, pred_dicts, class_names, output_path=None):
        def get_template_prediction(num_samples):
            ret_dict = {
                'name': [], 'alpha': torch.zeros(num_samples),
                'bbox': torch.zeros([num_samples, 4]), 'dimensions': torch.zeros([num_samples, 3]),
                'location': torch.zeros([num_samples, 3]), 'rotation_y': torch.zeros(num_samples),
                'score': torch.zeros(num_samples), 'boxes_lidar': torch.zeros([num_samples, 7])
            }
            return ret_dict

        def generate_single_sample_dict(batch_index, box_dict):
            pred_scores = box_dict['pred_scores'].cpu()
            pred_boxes = box_dict['pred_boxes'].cpu()
            pred_labels = box_dict['pred_labels'].cpu()
            pred_dict = get_template_prediction(pred_scores.shape[0])
            if pred_scores.shape[0] == 0:
                return pred_dict

            calib = batch_dict['calib'][batch_index]
            image_shape = batch_dict['image_shape'][batch_index]
            pred_boxes_camera = boxes3d_lidar_to_kitti_camera(pred_boxes, calib)
            pred_boxes_img = boxes3d_kitti_camera_to_imageboxes(pred_boxes_camera, calib, image_shape=image_shape)

            pred_dict['name'] = [class_names[i - 1] for i in pred_labels.tolist()]
            pred_dict['alpha'] = -torch.atan2(-pred_boxes[:, 1], pred_boxes[:, 0]) + pred_boxes_camera[:, 6]
            pred_dict['bbox'] = pred_boxes_img
            pred_dict['dimensions'] = pred_boxes_camera[:, 3:6]
            pred_dict['location'] = pred_boxes_camera[:, 0:3]
            pred_dict['rotation_y'] = pred_boxes_camera[:, 6]
            pred_dict['score'] = pred_scores
            pred_dict['boxes_lidar'] = pred_boxes
            return pred_dict

        annos = []
        for index, box_dict in enumerate(pred_dicts):
            single_pred_dict = generate_single_sample_dict(index, box_dict)
            single_pred_dict['frame_id'] = batch_dict['frame_id'][index]
            annos.append(single_pred_dict)
        return annos


class TinyDetectorHead(nn.Module):
    """Stand-in for the detector's box head: proposals -> refined (N, 7) lidar boxes."""

    def __init__(self):
        super().__init__()
        self.reg = nn.Linear(7, 7)
        nn.init.zeros_(self.reg.weight)
        nn.init.zeros_(self.reg.bias)

    def forward(self, proposals):
        return proposals + self.reg(proposals)


def main():
    torch.manual_seed(0)
    head = TinyDetectorHead().eval()
    calib = Calibration(
        P2=torch.tensor([[700.0, 0.0, 600.0, 45.0], [0.0, 700.0, 180.0, 0.2], [0.0, 0.0, 1.0, 0.003]]),
        R0=torch.eye(3),
        V2C=torch.tensor([[0.0, -1.0, 0.0, 0.0], [0.0, 0.0, -1.0, -0.08], [1.0, 0.0, 0.0, -0.27]]))
    proposals = torch.tensor([[12.0, 1.5, -0.9, 3.9, 1.6, 1.5, 0.1],
                              [20.0, -3.0, -0.8, 4.2, 1.7, 1.6, -0.4],
                              [8.0, 2.0, -1.0, 0.8, 0.6, 1.7, 1.2]])
    with torch.no_grad():
        pred_boxes = head(proposals)
    pred_dicts = [{'pred_boxes': pred_boxes, 'pred_scores': torch.tensor([0.9, 0.8, 0.6]),
                   'pred_labels': torch.tensor([1, 1, 2])}]
    batch_dict = {'calib': [calib], 'image_shape': [(375, 1242)], 'frame_id': ['000001']}
    annos = KittiDataset.generate_prediction_dicts(batch_dict, pred_dicts, ['Car', 'Pedestrian'])
    boxes_lidar = annos[0]['boxes_lidar']
    location = annos[0]['location']
    bbox = annos[0]['bbox']
    return boxes_lidar, location, bbox


boxes_lidar, location, bbox = main()
print(boxes_lidar)
