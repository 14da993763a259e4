# label: hazard raises
# why: boolean indexing final_box_preds[i, cmask] saves cmask, a row view of mask, for backward; the next sample's cmask &= thresh_mask[i] bumps the version of the shared mask, so backward through the first sample's boxes fails.
# source: https://github.com/open-mmlab/mmdetection3d/commit/e9b1bbb3fd977143f7565d5fc42334f94e7119a9
import torch
import torch.nn as nn

torch.manual_seed(0)


class CenterPointBBoxCoder:
    def __init__(self, pc_range, out_size_factor, voxel_size, post_center_range=None, max_num=100, score_threshold=None):
        self.pc_range = pc_range
        self.out_size_factor = out_size_factor
        self.voxel_size = voxel_size
        self.post_center_range = post_center_range
        self.max_num = max_num
        self.score_threshold = score_threshold

    def _gather_feat(self, feats, inds, feat_masks=None):
        dim = feats.size(2)
        inds = inds.unsqueeze(2).expand(inds.size(0), inds.size(1), dim)
        feats = feats.gather(1, inds)
        return feats

    def _topk(self, scores, K=80):
        batch, cat, height, width = scores.size()
        topk_scores, topk_inds = torch.topk(scores.view(batch, cat, -1), K)
        topk_inds = topk_inds % (height * width)
        topk_ys = (topk_inds.float() / torch.tensor(width, dtype=torch.float)).int().float()
        topk_xs = (topk_inds % width).int().float()
        topk_score, topk_ind = torch.topk(topk_scores.view(batch, -1), K)
        topk_clses = (topk_ind / torch.tensor(K, dtype=torch.float)).int()
        topk_inds = self._gather_feat(topk_inds.view(batch, -1, 1), topk_ind).view(batch, K)
        topk_ys = self._gather_feat(topk_ys.view(batch, -1, 1), topk_ind).view(batch, K)
        topk_xs = self._gather_feat(topk_xs.view(batch, -1, 1), topk_ind).view(batch, K)
        return topk_score, topk_inds, topk_clses, topk_ys, topk_xs

    def _transpose_and_gather_feat(self, feat, ind):
        feat = feat.permute(0, 2, 3, 1).contiguous()
        feat = feat.view(feat.size(0), -1, feat.size(3))
        return self._gather_feat(feat, ind)

    def decode(self, heat, rot_sine, rot_cosine, hei, dim, vel, reg=None, task_id=-1):
        batch, cat, _, _ = heat.size()
        scores, inds, clses, ys, xs = self._topk(heat, K=self.max_num)

        if reg is not None:
            reg = self._transpose_and_gather_feat(reg, inds)
            reg = reg.view(batch, self.max_num, 2)
            xs = xs.view(batch, self.max_num, 1) + reg[:, :, 0:1]
            ys = ys.view(batch, self.max_num, 1) + reg[:, :, 1:2]
        else:
            xs = xs.view(batch, self.max_num, 1) + 0.5
            ys = ys.view(batch, self.max_num, 1) + 0.5

        rot_sine = self._transpose_and_gather_feat(rot_sine, inds).view(batch, self.max_num, 1)
        rot_cosine = self._transpose_and_gather_feat(rot_cosine, inds).view(batch, self.max_num, 1)
        rot = torch.atan2(rot_sine, rot_cosine)
        hei = self._transpose_and_gather_feat(hei, inds).view(batch, self.max_num, 1)
        dim = self._transpose_and_gather_feat(dim, inds).view(batch, self.max_num, 3)

        clses = clses.view(batch, self.max_num).float()
        scores = scores.view(batch, self.max_num)

        xs = xs.view(batch, self.max_num, 1) * self.out_size_factor * self.voxel_size[0] + self.pc_range[0]
        ys = ys.view(batch, self.max_num, 1) * self.out_size_factor * self.voxel_size[1] + self.pc_range[1]

        if vel is None:  # KITTI FORMAT
            final_box_preds = torch.cat([xs, ys, hei, dim, rot], dim=2)
        else:
            vel = self._transpose_and_gather_feat(vel, inds).view(batch, self.max_num, 2)
            final_box_preds = torch.cat([xs, ys, hei, dim, rot, vel], dim=2)

        final_scores = scores
        final_preds = clses

        if self.score_threshold is not None:
            thresh_mask = final_scores > self.score_threshold

        post_center_range = torch.tensor(self.post_center_range, device=heat.device)
        mask = (final_box_preds[..., :3] >= post_center_range[:3]).all(2)
        mask &= (final_box_preds[..., :3] <= post_center_range[3:]).all(2)

        predictions_dicts = []
        for i in range(batch):
            cmask = mask[i, :]
            if self.score_threshold:
                cmask &= thresh_mask[i]  # <-- IPL001: writes into mask, whose earlier row was saved by the boolean indexing below

            boxes3d = final_box_preds[i, cmask]
            scores = final_scores[i, cmask]
            labels = final_preds[i, cmask]
            predictions_dicts.append({"bboxes": boxes3d, "scores": scores, "labels": labels})
        return predictions_dicts


class SeparateHead(nn.Module):
    def __init__(self, in_channels=4, num_cls=2):
        super().__init__()
        self.heads = nn.ModuleDict({
            "heatmap": nn.Conv2d(in_channels, num_cls, 1), "reg": nn.Conv2d(in_channels, 2, 1),
            "height": nn.Conv2d(in_channels, 1, 1), "dim": nn.Conv2d(in_channels, 3, 1),
            "rot": nn.Conv2d(in_channels, 2, 1), "vel": nn.Conv2d(in_channels, 2, 1)})

    def forward(self, x):
        return {name: head(x) for name, head in self.heads.items()}


bbox_coder = CenterPointBBoxCoder(pc_range=[-8.0, -8.0], out_size_factor=2, voxel_size=[0.5, 0.5],
                                  post_center_range=[-6.0, -6.0, -5.0, 6.0, 6.0, 5.0], max_num=12, score_threshold=0.3)
task_head = SeparateHead()
bev_feats = torch.randn(2, 4, 8, 8)
preds = task_head(bev_feats)
batch_heatmap = preds["heatmap"].sigmoid()
batch_rots, batch_rotc = preds["rot"][:, 0:1], preds["rot"][:, 1:2]
batch_dim = torch.exp(preds["dim"])
temp = bbox_coder.decode(batch_heatmap, batch_rots, batch_rotc, preds["height"], batch_dim, preds["vel"], reg=preds["reg"])
num_dets = [len(t["scores"]) for t in temp]
proxy_loss = sum(t["bboxes"].abs().sum() + t["scores"].sum() for t in temp)
proxy_loss.backward()
