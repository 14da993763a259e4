# label: hazard raises
# why: run outside torch.no_grad(), the ROI augmentation rotates the proposal boxes in place after atan2 saved slices of those same boxes for backward
# source: https://github.com/sshaoshuai/PointRCNN/issues/153
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def rotate_pc_along_y_torch(pc, rot_angle):
    cosa = torch.cos(rot_angle).view(-1, 1)
    sina = torch.sin(rot_angle).view(-1, 1)
    raw_1 = torch.cat([cosa, -sina], dim=1)
    raw_2 = torch.cat([sina, cosa], dim=1)
    R = torch.cat((raw_1.unsqueeze(dim=1), raw_2.unsqueeze(dim=1)), dim=1)
    pc_temp = pc[:, :, [0, 2]]
    pc[:, :, [0, 2]] = torch.matmul(pc_temp, R.permute(0, 2, 1))  # <-- IPL001: rotates the ROI boxes in place although atan2 saved them
    return pc


class ProposalTargetLayer(nn.Module):
    def forward(self, input_dict):
        rois, gt_of_rois = input_dict['roi_boxes3d'], input_dict['gt_of_rois']
        pts = input_dict['sampled_pts']
        pts, rois, gt_of_rois = self.data_augmentation(pts, rois, gt_of_rois)
        roi_ry = rois[:, :, 6] % (2 * np.pi)
        roi_center = rois[:, :, 0:3]
        pts = pts - roi_center.unsqueeze(dim=2)
        gt_of_rois = torch.cat((gt_of_rois[:, :, 0:3] - roi_center, gt_of_rois[:, :, 3:6],
                                (gt_of_rois[:, :, 6] - roi_ry).unsqueeze(-1)), dim=2)
        return {'sampled_pts': pts, 'roi_boxes3d': rois, 'gt_of_rois': gt_of_rois}

    @staticmethod
    def data_augmentation(pts, rois, gt_of_rois):
        batch_size, boxes_num = pts.shape[0], pts.shape[1]
        angles = (torch.rand((batch_size, boxes_num)) - 0.5 / 0.5) * (np.pi / 12)

        temp_x, temp_z, temp_ry = rois[:, :, 0], rois[:, :, 2], rois[:, :, 6]
        temp_beta = torch.atan2(temp_z, temp_x)
        roi_alpha = -torch.sign(temp_beta) * np.pi / 2 + temp_beta + temp_ry

        new_rois = []
        for k in range(batch_size):
            pts[k] = rotate_pc_along_y_torch(pts[k], angles[k])
            rois[k] = rotate_pc_along_y_torch(rois[k].unsqueeze(dim=1), angles[k]).squeeze(dim=1)  # <-- IPL001: writes the rotated boxes back into rois, saved by atan2
            temp_x, temp_z = rois[k, :, 0], rois[k, :, 2]
            temp_beta = torch.atan2(temp_z, temp_x)
            ry = torch.sign(temp_beta) * np.pi / 2 + roi_alpha[k] - temp_beta
            new_rois.append(torch.cat((rois[k, :, 0:6], ry.unsqueeze(-1)), dim=1))
        return pts, torch.stack(new_rois), gt_of_rois


class RCNNNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.proposal_target_layer = ProposalTargetLayer()
        self.mlp = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 16))
        self.reg_layer = nn.Linear(16 + 7, 7)

    def forward(self, input_data):
        target_dict = self.proposal_target_layer(input_data)
        feat = self.mlp(target_dict['sampled_pts']).max(dim=2)[0]
        rcnn_reg = self.reg_layer(torch.cat((feat, target_dict['roi_boxes3d']), dim=2))
        return {'rcnn_reg': rcnn_reg, **target_dict}


rpn_head = nn.Linear(8, 7)
rcnn = RCNNNet()
rpn_features = torch.randn(2, 3, 8)
roi_boxes3d = rpn_head(rpn_features)
input_data = {'roi_boxes3d': roi_boxes3d,
              'gt_of_rois': torch.randn(2, 3, 7),
              'sampled_pts': torch.randn(2, 3, 5, 3)}
ret_dict = rcnn(input_data)
rcnn_loss = F.smooth_l1_loss(ret_dict['rcnn_reg'], ret_dict['gt_of_rois'])
rcnn_loss.backward()
