# label: safe
# why: the fixed __init__ stores tensor.clone(), so the in-place origin shift only touches the boxes' own copy and the head's bbox_preds stay intact for the centre loss.
# source: https://github.com/open-mmlab/mmdetection3d/commit/0f42f72ff802b05f29781c49f1b397439ebaba53
import torch
import torch.nn as nn

torch.manual_seed(0)


class BaseInstance3DBoxes(object):
    def __init__(self, tensor, box_dim=7, with_yaw=True, origin=(0.5, 0.5, 0)):
        if isinstance(tensor, torch.Tensor):
            device = tensor.device
        else:
            device = torch.device("cpu")
        tensor = torch.as_tensor(tensor, dtype=torch.float32, device=device)
        assert tensor.dim() == 2 and tensor.size(-1) == box_dim, tensor.size()
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


class LiDARInstance3DBoxes(BaseInstance3DBoxes):
    pass


class VoteHead(nn.Module):
    def __init__(self, in_channels=16):
        super().__init__()
        self.conv_pred = nn.Linear(in_channels, 7)

    def forward(self, feats):
        return self.conv_pred(feats)

    def loss(self, bbox_preds, gt_bboxes_3d):
        pred_boxes = LiDARInstance3DBoxes(bbox_preds, origin=(0.5, 0.5, 0.5))
        gt_boxes = LiDARInstance3DBoxes(gt_bboxes_3d.clone(), origin=(0.5, 0.5, 0.5))
        losses = dict()
        losses["bottom_loss"] = (pred_boxes.bottom_center - gt_boxes.bottom_center).abs().mean()
        losses["size_loss"] = (pred_boxes.volume - gt_boxes.volume).abs().mean()
        # centre regression on the raw predictions (gravity centre)
        losses["center_loss"] = (bbox_preds[:, :3] - gt_bboxes_3d[:, :3]).pow(2).mean()
        return losses


head = VoteHead()
feats = torch.randn(6, 16)
gt_bboxes_3d = torch.cat([torch.randn(6, 3), torch.rand(6, 3) + 0.5, torch.zeros(6, 1)], dim=1)
bbox_preds = head(feats)
losses = head.loss(bbox_preds, gt_bboxes_3d)
loss = sum(losses.values())
loss.backward()
center_loss = losses["center_loss"]
