# label: hazard silent
# why: BaseInstance3DBoxes wraps the array with torch.as_tensor (no copy for float32 numpy) and shifts the origin with `self.tensor[:, :3] += ...`, so every evaluation pass silently moves the z of the ground-truth annotations it was given.
# source: https://github.com/open-mmlab/mmdetection3d/issues/277
import numpy as np
import torch

torch.manual_seed(0)


class BaseInstance3DBoxes(object):
    def __init__(self, tensor, box_dim=7, with_yaw=True, origin=(0.5, 0.5, 0)):
        if isinstance(tensor, torch.Tensor):
            device = tensor.device
        else:
            device = torch.device('cpu')
        tensor = torch.as_tensor(tensor, dtype=torch.float32, device=device)
        if tensor.numel() == 0:
            tensor = tensor.reshape((0, box_dim)).to(dtype=torch.float32, device=device)
        assert tensor.dim() == 2 and tensor.size(-1) == box_dim, tensor.size()

        self.box_dim = box_dim
        self.with_yaw = with_yaw
        self.tensor = tensor

        if origin != (0.5, 0.5, 0):
            dst = self.tensor.new_tensor((0.5, 0.5, 0))
            src = self.tensor.new_tensor(origin)
            self.tensor[:, :3] += self.tensor[:, 3:6] * (dst - src)  # <-- IPL004, IPL002: writes through as_tensor into the caller's GT array

    @property
    def gravity_center(self):
        bottom_center = self.tensor[:, :3]
        gravity_center = torch.zeros_like(bottom_center)
        gravity_center[:, :2] = bottom_center[:, :2]
        gravity_center[:, 2] = bottom_center[:, 2] + self.tensor[:, 5] * 0.5
        return gravity_center


class DepthInstance3DBoxes(BaseInstance3DBoxes):
    pass


def indoor_eval(gt_annos, dt_annos, box_type_3d=DepthInstance3DBoxes):
    centers = []
    for gt_anno, dt_anno in zip(gt_annos, dt_annos):
        gt_boxes = box_type_3d(gt_anno['gt_boxes_upright_depth'], box_dim=gt_anno['gt_boxes_upright_depth'].shape[-1],
                               origin=(0.5, 0.5, 0.5))
        pred_boxes = dt_anno['boxes_3d']
        centers.append((gt_boxes.gravity_center - pred_boxes.gravity_center).abs().mean())
    return torch.stack(centers)


rng = np.random.RandomState(0)
gt_annos = [{'gt_boxes_upright_depth': rng.rand(3, 7).astype(np.float32)} for _ in range(2)]
dt_annos = [{'boxes_3d': DepthInstance3DBoxes(torch.rand(3, 7))} for _ in range(2)]

center_err_epoch1 = indoor_eval(gt_annos, dt_annos)
center_err_epoch2 = indoor_eval(gt_annos, dt_annos)
gt_z_after = torch.from_numpy(np.stack([a['gt_boxes_upright_depth'][:, 2] for a in gt_annos]))
