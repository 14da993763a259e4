# label: hazard silent
# why: temp_box = cur_gt_boxes[idx] is a view into the batch gt_boxes, so writing the per-head class index into temp_box[-1] relabels the shared gt_boxes, and the next head reads the relabelled class ids (a Pedestrian becomes a Vehicle) when it builds its heatmap targets.
# source: https://github.com/open-mmlab/OpenPCDet/commit/9ee00921454b87d933bc5d20b63f5d094b3a49ea (Fix possible bug with shared memory; pcdet/models/dense_heads/center_head.py assign_targets)
import torch
import torch.nn as nn

torch.manual_seed(0)


class CenterHead(nn.Module):
    def __init__(self, input_channels, class_names, class_names_each_head, feature_map_stride=1, num_max_objs=8):
        super().__init__()
        self.class_names = class_names
        self.class_names_each_head = class_names_each_head
        self.feature_map_stride = feature_map_stride
        self.num_max_objs = num_max_objs
        self.heads_list = nn.ModuleList([
            nn.Conv2d(input_channels, len(cur_class_names), 3, padding=1) for cur_class_names in class_names_each_head
        ])

    def assign_target_of_single_head(self, num_classes, gt_boxes, feature_map_size, feature_map_stride, num_max_objs=8):
        heatmap = gt_boxes.new_zeros(num_classes, feature_map_size[1], feature_map_size[0])
        ret_boxes = gt_boxes.new_zeros((num_max_objs, gt_boxes.shape[-1] - 1 + 1))
        inds = gt_boxes.new_zeros(num_max_objs).long()
        mask = gt_boxes.new_zeros(num_max_objs).long()

        x, y, z = gt_boxes[:, 0], gt_boxes[:, 1], gt_boxes[:, 2]
        coord_x = (x / feature_map_stride).clamp(0, feature_map_size[0] - 0.5)
        coord_y = (y / feature_map_stride).clamp(0, feature_map_size[1] - 0.5)
        center = torch.cat((coord_x[:, None], coord_y[:, None]), dim=-1)
        center_int = center.int()

        for k in range(min(num_max_objs, gt_boxes.shape[0])):
            cur_class_id = (gt_boxes[k, -1] - 1).long()
            heatmap[cur_class_id, center_int[k, 1], center_int[k, 0]] = 1.0
            inds[k] = center_int[k, 1] * feature_map_size[0] + center_int[k, 0]
            mask[k] = 1
            ret_boxes[k, 0:2] = center[k] - center_int[k].float()
            ret_boxes[k, 2] = z[k]
            ret_boxes[k, 3:6] = gt_boxes[k, 3:6].log()
        return heatmap, ret_boxes, inds, mask

    def assign_targets(self, gt_boxes, feature_map_size=None):
        feature_map_size = feature_map_size[::-1]  # [H, W] ==> [x, y]
        batch_size = gt_boxes.shape[0]
        ret_dict = {'heatmaps': [], 'target_boxes': [], 'inds': [], 'masks': []}

        all_names = ['bg', *self.class_names]
        for idx, cur_class_names in enumerate(self.class_names_each_head):
            heatmap_list, target_boxes_list, inds_list, masks_list = [], [], [], []
            for bs_idx in range(batch_size):
                cur_gt_boxes = gt_boxes[bs_idx]
                gt_class_names = [all_names[i] for i in cur_gt_boxes[:, -1].cpu().long().tolist()]

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

                heatmap, ret_boxes, inds, mask = self.assign_target_of_single_head(
                    num_classes=len(cur_class_names), gt_boxes=gt_boxes_single_head,
                    feature_map_size=feature_map_size, feature_map_stride=self.feature_map_stride,
                    num_max_objs=self.num_max_objs,
                )
                heatmap_list.append(heatmap)
                target_boxes_list.append(ret_boxes)
                inds_list.append(inds)
                masks_list.append(mask)

            ret_dict['heatmaps'].append(torch.stack(heatmap_list, dim=0))
            ret_dict['target_boxes'].append(torch.stack(target_boxes_list, dim=0))
            ret_dict['inds'].append(torch.stack(inds_list, dim=0))
            ret_dict['masks'].append(torch.stack(masks_list, dim=0))
        return ret_dict

    def forward(self, spatial_features_2d, gt_boxes):
        pred_dicts = [{'hm': head(spatial_features_2d)} for head in self.heads_list]
        target_dict = self.assign_targets(gt_boxes, feature_map_size=spatial_features_2d.size()[2:])
        loss = 0
        for idx, pred_dict in enumerate(pred_dicts):
            pred_hm = torch.clamp(pred_dict['hm'].sigmoid(), min=1e-4, max=1 - 1e-4)
            target_hm = target_dict['heatmaps'][idx]
            loss = loss + nn.functional.binary_cross_entropy(pred_hm, target_hm)
        return loss, target_dict


def main():
    head = CenterHead(input_channels=4, class_names=['Vehicle', 'Pedestrian', 'Cyclist'],
                      class_names_each_head=[['Pedestrian', 'Cyclist'], ['Vehicle']])
    spatial_features_2d = torch.randn(2, 4, 8, 8)
    # (x, y, z, dx, dy, dz, class_id)
    gt_boxes = torch.tensor([
        [[1.0, 1.0, 0.0, 4.0, 2.0, 1.5, 1.0], [5.0, 2.0, 0.0, 0.8, 0.8, 1.7, 2.0], [3.0, 6.0, 0.0, 1.8, 0.6, 1.7, 3.0]],
        [[6.0, 6.0, 0.0, 4.2, 2.0, 1.6, 1.0], [2.0, 4.0, 0.0, 0.7, 0.7, 1.8, 2.0], [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0]],
    ])
    loss, target_dict = head(spatial_features_2d, gt_boxes)
    loss.backward()
    return loss.detach(), target_dict['heatmaps'][1], head.heads_list[1].weight.grad.clone()


loss, vehicle_heatmaps, grad = main()
