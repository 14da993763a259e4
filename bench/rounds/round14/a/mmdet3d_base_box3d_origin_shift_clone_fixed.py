# label: safe
# why: with the fix self.tensor is tensor.clone(), so the in-place origin shift only touches the box object's own copy and the head's bbox_preds stay as predicted.
# source: https://github.com/open-mmlab/mmdetection3d/pull/283 (commit 0a7fb9c7803a29795c6f04ed894736c199d3612c, fixed version)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BaseInstance3DBoxes(object):
    def __init__(self, tensor, box_dim=7, with_yaw=True, origin=(0.5, 0.5, 0)):
        if isinstance(tensor, torch.Tensor):
            device = tensor.device
        else:
            device = torch.device("cpu")
        tensor = torch.as_tensor(tensor, dtype=torch.float32, device=device)
        if tensor.numel() == 0:
            tensor = tensor.reshape((0, box_dim)).to(dtype=torch.float32, device=device)
        assert tensor.dim() == 2 and tensor.size(-1) == box_dim, tensor.size()

        if tensor.shape[-1] == 6:
            assert box_dim == 6
            fake_rot = tensor.new_zeros(tensor.shape[0], 1)
            tensor = torch.cat((tensor, fake_rot), dim=-1)
            self.box_dim = box_dim + 1
            self.with_yaw = False
        else:
            self.box_dim = box_dim
            self.with_yaw = with_yaw
        self.tensor = tensor.clone()

        if origin != (0.5, 0.5, 0):
            dst = self.tensor.new_tensor((0.5, 0.5, 0))
            src = self.tensor.new_tensor(origin)
            self.tensor[:, :3] += self.tensor[:, 3:6] * (dst - src)

    @property
    def volume(self):
        return self.tensor[:, 3] * self.tensor[:, 4] * self.tensor[:, 5]

    @property
    def bottom_center(self):
        return self.tensor[:, :3]


class DepthInstance3DBoxes(BaseInstance3DBoxes):
    pass


class ImVoxelHead(nn.Module):
    def __init__(self, in_channels=8):
        super().__init__()
        self.reg = nn.Linear(in_channels, 7)

    def decode(self, feats, centers):
        deltas = self.reg(feats)
        xyz = centers + deltas[:, :3]
        dims = deltas[:, 3:6].exp()
        yaw = deltas[:, 6:7]
        return torch.cat([xyz, dims, yaw], dim=1)

    def forward_train(self, feats, centers, gt_bboxes):
        bbox_preds = self.decode(feats, centers)
        # boxes are reported with gravity-center origin for the evaluation hook
        pred_boxes = DepthInstance3DBoxes(bbox_preds, box_dim=7, origin=(0.5, 0.5, 0.5))
        loss_center = F.smooth_l1_loss(bbox_preds[:, :3], gt_bboxes[:, :3])
        loss_size = F.l1_loss(bbox_preds[:, 3:6].log(), gt_bboxes[:, 3:6].log())
        return loss_center + loss_size, pred_boxes


head = ImVoxelHead()
feats = torch.randn(4, 8)
centers = torch.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 0.4], [2.5, 0.5, 0.6], [-1.0, 1.0, 0.5]])
gt_bboxes = torch.cat([centers + 0.1, torch.full((4, 3), 1.2), torch.zeros(4, 1)], dim=1)
loss, pred_boxes = head.forward_train(feats, centers, gt_bboxes)
loss.backward()
pred_bottom = pred_boxes.bottom_center.detach()
