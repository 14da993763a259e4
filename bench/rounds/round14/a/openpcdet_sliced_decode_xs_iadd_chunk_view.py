# label: hazard raises
# why: the sliced CenterHead stores per-sample xs/ys as flattened torch.chunk views of a stacked score tensor that requires grad, and decode_bbox_from_heatmap_sliced then shifts xs/ys by the predicted center offsets in place.
# source: https://github.com/open-mmlab/OpenPCDet/commit/121e96db5febc85e64ddf889675d2deec592badb
import torch
import torch.nn as nn

torch.manual_seed(0)


def _gather_feat(feat, ind, mask=None):
    dim = feat.size(2)
    ind = ind.unsqueeze(2).expand(ind.size(0), ind.size(1), dim)
    return feat.gather(1, ind)


def _topk(scores, K=40, using_slicing=False):
    batch, num_class, height, width = scores.size()
    topk_scores, topk_inds = torch.topk(scores.flatten(2, 3), K)
    topk_inds = topk_inds % (height * width)
    topk_ys = (topk_inds // width).float()
    topk_xs = (topk_inds % width).int().float()
    topk_score, topk_ind = torch.topk(topk_scores.view(batch, -1), K)
    topk_classes = topk_ind // K
    topk_classes = topk_classes.int() if not using_slicing else topk_classes.float()
    topk_inds = _gather_feat(topk_inds.view(batch, -1, 1), topk_ind).view(batch, K) if not using_slicing else None
    topk_ys = _gather_feat(topk_ys.view(batch, -1, 1), topk_ind).view(batch, K)
    topk_xs = _gather_feat(topk_xs.view(batch, -1, 1), topk_ind).view(batch, K)
    return topk_score, topk_inds, topk_classes, topk_ys, topk_xs


def decode_bbox_from_heatmap_sliced(rot_cos, rot_sin, center, center_z, dim, point_cloud_range=None,
                                    voxel_size=None, feature_map_stride=None, topk_outp=None):
    ret_pred_dicts = []
    for k in range(len(topk_outp)):
        (scores, _, class_ids, ys, xs) = topk_outp[k]

        angle = torch.atan2(rot_sin[k], rot_cos[k])
        xs += center[k][:, 0]  # <-- IPL001: xs is a flattened torch.chunk view of a tensor that requires grad
        ys += center[k][:, 1]  # <-- IPL001: same for ys

        xs = xs * feature_map_stride * voxel_size[0] + point_cloud_range[0]
        ys = ys * feature_map_stride * voxel_size[1] + point_cloud_range[1]

        box_part_list = [xs.unsqueeze(dim=-1), ys.unsqueeze(dim=-1), center_z[k], dim[k], angle]
        box_preds = torch.cat((box_part_list), dim=-1)
        ret_pred_dicts.append({"pred_boxes": box_preds, "pred_scores": scores, "pred_labels": class_ids.int()})
    return ret_pred_dicts


class CenterHeadGroupSbnet(nn.Module):
    def __init__(self, in_ch=4, num_class=2, max_obj_per_sample=4, score_thresh=0.0):
        super().__init__()
        self.max_obj_per_sample = max_obj_per_sample
        self.score_thresh = score_thresh
        self.heatmap_conv = nn.Conv2d(in_ch, num_class, 3, padding=1)
        self.sigmoid = nn.Sigmoid()
        self.det_head = nn.Linear(in_ch, 2 + 1 + 3 + 2)  # center(2), center_z, dim(3), rot(2)

    def forward(self, shr_conv_outp):
        pd = {"hm": self.sigmoid(self.heatmap_conv(shr_conv_outp))}
        heatmap = pd["hm"]
        topk_score, topk_inds, topk_classes, topk_ys, topk_xs = _topk(heatmap, K=self.max_obj_per_sample, using_slicing=True)

        topk_outp, feats = [], []
        masks = topk_score > self.score_thresh
        for b, (scores, classes, ys, xs, mask) in enumerate(zip(topk_score, topk_classes, topk_ys, topk_xs, masks)):
            # stack all of these and then apply the mask
            topk_vals = torch.stack((scores, classes, ys, xs))
            masked_topk_vals = topk_vals[:, mask]
            tensors = torch.chunk(masked_topk_vals, 4)
            scores, classes, ys, xs = (t.flatten() for t in tensors)
            topk_outp.append((scores, None, classes, ys, xs))
            feats.append(shr_conv_outp[b][:, ys.long(), xs.long()].t())
        pd["topk_outp"] = topk_outp

        outp = [self.det_head(f) for f in feats]
        pd["center"] = [o[:, 0:2] for o in outp]
        pd["center_z"] = [o[:, 2:3] for o in outp]
        pd["dim"] = [o[:, 3:6].exp() for o in outp]
        pd["rot"] = [o[:, 6:8] for o in outp]
        return pd


head = CenterHeadGroupSbnet()
features = torch.randn(2, 4, 6, 6)
pred_dict = head(features)
final_pred_dicts = decode_bbox_from_heatmap_sliced(
    rot_cos=[r[:, 0:1] for r in pred_dict["rot"]], rot_sin=[r[:, 1:2] for r in pred_dict["rot"]],
    center=pred_dict["center"], center_z=pred_dict["center_z"], dim=pred_dict["dim"],
    point_cloud_range=[-8.0, -8.0, -2.0, 8.0, 8.0, 2.0], voxel_size=[0.5, 0.5, 4.0], feature_map_stride=2,
    topk_outp=pred_dict["topk_outp"],
)
loss = sum(d["pred_boxes"].abs().mean() + d["pred_scores"].sum() for d in final_pred_dicts)
loss.backward()
