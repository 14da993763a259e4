# label: safe
# why: get_output_and_grid decodes box centres and sizes by slice-assigning into the output of reshape-after-permute, which is a fresh copy that no backward formula saved, and the L1 branch keeps its own clone of the raw regression output.
# source: https://github.com/Megvii-BaseDetection/YOLOX/blob/main/yolox/models/yolo_head.py (get_output_and_grid / forward)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def meshgrid(*tensors):
    return torch.meshgrid(*tensors, indexing="ij")


class YOLOXHead(nn.Module):
    def __init__(self, num_classes=2, width=8, strides=(8, 16)):
        super().__init__()
        self.num_classes = num_classes
        self.strides = strides
        self.stems = nn.ModuleList([nn.Conv2d(width, width, 1) for _ in strides])
        self.reg_convs = nn.ModuleList([nn.Sequential(nn.Conv2d(width, width, 3, padding=1), nn.SiLU()) for _ in strides])
        self.cls_convs = nn.ModuleList([nn.Sequential(nn.Conv2d(width, width, 3, padding=1), nn.SiLU()) for _ in strides])
        self.reg_preds = nn.ModuleList([nn.Conv2d(width, 4, 1) for _ in strides])
        self.obj_preds = nn.ModuleList([nn.Conv2d(width, 1, 1) for _ in strides])
        self.cls_preds = nn.ModuleList([nn.Conv2d(width, num_classes, 1) for _ in strides])
        self.grids = [torch.zeros(1)] * len(strides)
        self.use_l1 = True

    def get_output_and_grid(self, output, k, stride, dtype):
        grid = self.grids[k]

        batch_size = output.shape[0]
        n_ch = 5 + self.num_classes
        hsize, wsize = output.shape[-2:]
        if grid.shape[2:4] != output.shape[2:4]:
            yv, xv = meshgrid([torch.arange(hsize), torch.arange(wsize)])
            grid = torch.stack((xv, yv), 2).view(1, 1, hsize, wsize, 2).type(dtype)
            self.grids[k] = grid

        output = output.view(batch_size, 1, n_ch, hsize, wsize)
        output = output.permute(0, 1, 3, 4, 2).reshape(
            batch_size, hsize * wsize, -1
        )
        grid = grid.view(1, -1, 2)
        output[..., :2] = (output[..., :2] + grid) * stride
        output[..., 2:4] = torch.exp(output[..., 2:4]) * stride
        return output, grid

    def forward(self, xin):
        outputs = []
        origin_preds = []
        for k, (stride_this_level, x) in enumerate(zip(self.strides, xin)):
            x = self.stems[k](x)
            cls_feat = self.cls_convs[k](x)
            cls_output = self.cls_preds[k](cls_feat)
            reg_feat = self.reg_convs[k](x)
            reg_output = self.reg_preds[k](reg_feat)
            obj_output = self.obj_preds[k](reg_feat)

            output = torch.cat([reg_output, obj_output, cls_output], 1)
            output, grid = self.get_output_and_grid(output, k, stride_this_level, x.dtype)
            if self.use_l1:
                batch_size = reg_output.shape[0]
                hsize, wsize = reg_output.shape[-2:]
                reg_output = reg_output.view(batch_size, 1, 4, hsize, wsize)
                reg_output = reg_output.permute(0, 1, 3, 4, 2).reshape(batch_size, -1, 4)
                origin_preds.append(reg_output.clone())
            outputs.append(output)
        return torch.cat(outputs, 1), torch.cat(origin_preds, 1)


def main():
    head = YOLOXHead()
    feats = [torch.randn(2, 8, 8, 8), torch.randn(2, 8, 4, 4)]
    outputs, origin_preds = head(feats)
    bbox_targets = torch.rand(2, outputs.shape[1], 4) * 32
    l1_targets = torch.randn(2, outputs.shape[1], 4) * 0.1
    obj_targets = torch.zeros(2, outputs.shape[1], 1)
    obj_targets[:, :5] = 1.0
    loss_iou = F.smooth_l1_loss(outputs[..., :4], bbox_targets)
    loss_obj = F.binary_cross_entropy_with_logits(outputs[..., 4:5], obj_targets)
    loss_l1 = F.l1_loss(origin_preds, l1_targets)
    loss = 5.0 * loss_iou + loss_obj + loss_l1
    loss.backward()
    return outputs.detach(), head.reg_preds[0].weight.grad


outputs, reg_grad = main()
