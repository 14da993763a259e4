# label: hazard silent
# why: CenterHead.assign_targets takes temp_box = cur_gt_boxes[idx] (a row view of the batch gt_boxes) and rewrites its class column in place with the per-head label, so the next head re-reads the overwritten labels from gt_boxes and assigns boxes to the wrong classes.
# source: https://github.com/open-mmlab/OpenPCDet/pull/1516 (commit 9ee00921454b87d933bc5d20b63f5d094b3a49ea "Fix possible bug with shared memory")
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def gaussian_2d(shape, center, radius):
    x, y = int(center[0]), int(center[1])
    ys, xs = torch.meshgrid(torch.arange(shape[0]), torch.arange(shape[1]), indexing="ij")
    return torch.exp(-((xs - x) ** 2 + (ys - y) ** 2) / (2 * (radius / 3) ** 2))


class CenterHead(nn.Module):
    def __init__(self, class_names, class_names_each_head):
        super().__init__()
        self.class_names = class_names
        self.class_names_each_head = class_names_each_head
        self.heads = nn.ModuleList([nn.Conv2d(4, len(names), 3, padding=1) for names in class_names_each_head])

    def assign_target_of_single_head(self, num_classes, gt_boxes, feature_map_size):
        heatmap = gt_boxes.new_zeros(num_classes, feature_map_size[1], feature_map_size[0])
        for k in range(gt_boxes.shape[0]):
            cur_class_id = (gt_boxes[k, -1] - 1).long()
            gaussian = gaussian_2d(heatmap.shape[1:], gt_boxes[k, 0:2], 2.0)
            heatmap[cur_class_id] = torch.maximum(heatmap[cur_class_id], gaussian)
        return heatmap

    def assign_targets(self, gt_boxes, feature_map_size=None):
        batch_size = gt_boxes.shape[0]
        ret_dict = {'heatmaps': []}
        all_names = ['bg', *self.class_names]
        for idx, cur_class_names in enumerate(self.class_names_each_head):
            heatmap_list = []
            for bs_idx in range(batch_size):
                cur_gt_boxes = gt_boxes[bs_idx]
                gt_class_names = [all_names[int(c)] for c in cur_gt_boxes[:, -1].long()]

                gt_boxes_single_head = []
                for idx, name in enumerate(gt_class_names):
                    if name not in cur_class_names:
                        continue
                    temp_box = cur_gt_boxes[idx]
                    temp_box[-1] = cur_class_names.index(name) + 1  # <-- IPL002, IPL004
                    gt_boxes_single_head.append(temp_box[None, :])

                if len(gt_boxes_single_head) == 0:
                    gt_boxes_single_head = cur_gt_boxes[:0, :]
                else:
                    gt_boxes_single_head = torch.cat(gt_boxes_single_head, dim=0)

                heatmap = self.assign_target_of_single_head(
                    num_classes=len(cur_class_names), gt_boxes=gt_boxes_single_head,
                    feature_map_size=feature_map_size)
                heatmap_list.append(heatmap)
            ret_dict['heatmaps'].append(torch.stack(heatmap_list, dim=0))
        return ret_dict

    def forward(self, spatial_features_2d, gt_boxes):
        pred_hms = [torch.sigmoid(head(spatial_features_2d)) for head in self.heads]
        target_dict = self.assign_targets(gt_boxes, feature_map_size=spatial_features_2d.shape[2:][::-1])
        loss = 0
        for pred, target in zip(pred_hms, target_dict['heatmaps']):
            loss = loss + F.binary_cross_entropy(pred, target)
        return loss, target_dict


def main():
    head = CenterHead(['car', 'truck', 'bus', 'pedestrian'], [['truck', 'bus'], ['car'], ['pedestrian']])
    feats = torch.randn(1, 4, 8, 8)
    # (x, y, dx, dy, label) with labels 1-based over class_names
    gt_boxes = torch.tensor([[[1., 1., 1., 1., 1.],
                              [5., 2., 1., 1., 3.],
                              [2., 6., 1., 1., 4.],
                              [6., 6., 1., 1., 2.]]])
    loss, target_dict = head(feats, gt_boxes)
    loss.backward()
    return loss.detach(), target_dict['heatmaps'][0], target_dict['heatmaps'][1], head.heads[1].weight.grad


loss, hm_truck_bus, hm_car, grad = main()
