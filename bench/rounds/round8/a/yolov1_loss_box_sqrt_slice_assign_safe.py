# label: safe
# why: YoloLoss overwrites the w/h slices of box_predictions with their signed square root, but nothing saved box_predictions itself for backward, so CopySlices gives the same gradient as an out-of-place rebuild.
# source: https://github.com/aladdinpersson/Machine-Learning-Collection/issues/87
import torch
import torch.nn as nn

torch.manual_seed(0)


def intersection_over_union(boxes_preds, boxes_labels):
    box1_x1 = boxes_preds[..., 0:1] - boxes_preds[..., 2:3] / 2
    box1_y1 = boxes_preds[..., 1:2] - boxes_preds[..., 3:4] / 2
    box1_x2 = boxes_preds[..., 0:1] + boxes_preds[..., 2:3] / 2
    box1_y2 = boxes_preds[..., 1:2] + boxes_preds[..., 3:4] / 2
    box2_x1 = boxes_labels[..., 0:1] - boxes_labels[..., 2:3] / 2
    box2_y1 = boxes_labels[..., 1:2] - boxes_labels[..., 3:4] / 2
    box2_x2 = boxes_labels[..., 0:1] + boxes_labels[..., 2:3] / 2
    box2_y2 = boxes_labels[..., 1:2] + boxes_labels[..., 3:4] / 2
    x1 = torch.max(box1_x1, box2_x1)
    y1 = torch.max(box1_y1, box2_y1)
    x2 = torch.min(box1_x2, box2_x2)
    y2 = torch.min(box1_y2, box2_y2)
    intersection = (x2 - x1).clamp(0) * (y2 - y1).clamp(0)
    box1_area = abs((box1_x2 - box1_x1) * (box1_y2 - box1_y1))
    box2_area = abs((box2_x2 - box2_x1) * (box2_y2 - box2_y1))
    return intersection / (box1_area + box2_area - intersection + 1e-6)


class YoloLoss(nn.Module):
    def __init__(self, S=2, B=2, C=3):
        super(YoloLoss, self).__init__()
        self.mse = nn.MSELoss(reduction="sum")
        self.S, self.B, self.C = S, B, C
        self.lambda_noobj = 0.5
        self.lambda_coord = 5

    def forward(self, predictions, target):
        C = self.C
        predictions = predictions.reshape(-1, self.S, self.S, C + self.B * 5)
        iou_b1 = intersection_over_union(predictions[..., C + 1:C + 5], target[..., C + 1:C + 5])
        iou_b2 = intersection_over_union(predictions[..., C + 6:C + 10], target[..., C + 1:C + 5])
        ious = torch.cat([iou_b1.unsqueeze(0), iou_b2.unsqueeze(0)], dim=0)
        iou_maxes, bestbox = torch.max(ious, dim=0)
        exists_box = target[..., C].unsqueeze(3)

        box_predictions = exists_box * (
            bestbox * predictions[..., C + 6:C + 10] + (1 - bestbox) * predictions[..., C + 1:C + 5]
        )
        box_targets = exists_box * target[..., C + 1:C + 5]
        box_predictions[..., 2:4] = torch.sign(box_predictions[..., 2:4]) * torch.sqrt(
            torch.abs(box_predictions[..., 2:4] + 1e-6)
        )
        box_targets[..., 2:4] = torch.sqrt(box_targets[..., 2:4])
        box_loss = self.mse(torch.flatten(box_predictions, end_dim=-2), torch.flatten(box_targets, end_dim=-2))

        pred_box = bestbox * predictions[..., C + 5:C + 6] + (1 - bestbox) * predictions[..., C:C + 1]
        object_loss = self.mse(torch.flatten(exists_box * pred_box), torch.flatten(exists_box * target[..., C:C + 1]))
        no_object_loss = self.mse(
            torch.flatten((1 - exists_box) * predictions[..., C:C + 1], start_dim=1),
            torch.flatten((1 - exists_box) * target[..., C:C + 1], start_dim=1),
        )
        class_loss = self.mse(
            torch.flatten(exists_box * predictions[..., :C], end_dim=-2),
            torch.flatten(exists_box * target[..., :C], end_dim=-2),
        )
        return self.lambda_coord * box_loss + object_loss + self.lambda_noobj * no_object_loss + class_loss


model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 2 * 2 * 13))
loss_fn = YoloLoss()
x = torch.rand(2, 3, 8, 8)
target = torch.rand(2, 2, 2, 13)
target[..., 3] = (target[..., 3] > 0.5).float()
out = model(x)
loss = loss_fn(out, target)
loss.backward()
