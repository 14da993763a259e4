# label: safe
# why: the fix hands extract_img_feat a deepcopy of points, so the depth transform's in-place inverse augmentation (cur_coords -= ...) only shifts the copy and the lidar branch voxelizes the original points.
# source: https://github.com/open-mmlab/mmdetection3d/commit/40a97e21cde40ec0fd6da3b806b8e2693c24c157 (fixed version)
from copy import deepcopy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BaseDepthTransform(nn.Module):
    def __init__(self, in_channels=3, out_channels=4, image_size=(8, 8), bev_size=(4, 4)):
        super().__init__()
        self.image_size = image_size
        self.bev_size = bev_size
        self.depthnet = nn.Conv2d(in_channels + 1, out_channels, 3, padding=1)

    def get_cam_feats(self, img, depth):
        B, N, C, H, W = img.shape
        x = torch.cat([img, depth], dim=2).view(B * N, C + 1, H, W)
        x = F.relu(self.depthnet(x))
        return x.view(B, N, -1, H, W)

    def bev_pool(self, x):
        x = x.mean(dim=1)
        return F.adaptive_avg_pool2d(x, self.bev_size)

    def forward(self, img, points, lidar2image, cam_intrinsic, camera2lidar, img_aug_matrix, lidar_aug_matrix, metas, **kwargs):
        batch_size = len(points)
        depth = torch.zeros(batch_size, img.shape[1], 1, *self.image_size).to(points[0].device)

        for b in range(batch_size):
            cur_coords = points[b][:, :3]
            cur_img_aug_matrix = img_aug_matrix[b]
            cur_lidar_aug_matrix = lidar_aug_matrix[b]
            cur_lidar2image = lidar2image[b]

            # inverse aug
            cur_coords -= cur_lidar_aug_matrix[:3, 3]
            cur_coords = torch.inverse(cur_lidar_aug_matrix[:3, :3]).matmul(cur_coords.transpose(1, 0))
            # lidar2image
            cur_coords = cur_lidar2image[:, :3, :3].matmul(cur_coords)
            cur_coords += cur_lidar2image[:, :3, 3].reshape(-1, 3, 1)
            # get 2d coords
            dist = cur_coords[:, 2, :]
            cur_coords[:, 2, :] = torch.clamp(cur_coords[:, 2, :], 1e-5, 1e5)
            cur_coords[:, :2, :] /= cur_coords[:, 2:3, :]

            # imgaug
            cur_coords = cur_img_aug_matrix[:, :3, :3].matmul(cur_coords)
            cur_coords += cur_img_aug_matrix[:, :3, 3].reshape(-1, 3, 1)
            cur_coords = cur_coords[:, :2, :].transpose(1, 2)

            # normalize coords for grid sample
            cur_coords = cur_coords[..., [1, 0]]

            on_img = ((cur_coords[..., 0] < self.image_size[0]) & (cur_coords[..., 0] >= 0)
                      & (cur_coords[..., 1] < self.image_size[1]) & (cur_coords[..., 1] >= 0))
            for c in range(on_img.shape[0]):
                masked_coords = cur_coords[c, on_img[c]].long()
                masked_dist = dist[c, on_img[c]]
                depth = depth.to(masked_dist.dtype)
                depth[b, c, 0, masked_coords[:, 0], masked_coords[:, 1]] = masked_dist

        x = self.get_cam_feats(img, depth)
        return self.bev_pool(x)


class BEVFusion(nn.Module):
    def __init__(self, bev_size=(4, 4)):
        super().__init__()
        self.bev_size = bev_size
        self.view_transform = BaseDepthTransform(bev_size=bev_size)
        self.pts_middle_encoder = nn.Conv2d(1, 4, 3, padding=1)
        self.fusion_layer = nn.Conv2d(8, 4, 1)
        self.bbox_head = nn.Conv2d(4, 2, 1)

    @torch.no_grad()
    def voxelize(self, points):
        grids = []
        for res in points:
            grid = torch.zeros(1, *self.bev_size)
            ij = ((res[:, :2] + 4.0) / 2.0).long().clamp(0, self.bev_size[0] - 1)
            grid[0, ij[:, 0], ij[:, 1]] += 1.0
            grids.append(grid)
        return torch.stack(grids)

    def extract_pts_feat(self, batch_inputs_dict):
        points = batch_inputs_dict["points"]
        return F.relu(self.pts_middle_encoder(self.voxelize(points)))

    def extract_img_feat(self, x, points, lidar2image, camera_intrinsics, camera2lidar, img_aug_matrix, lidar_aug_matrix, img_metas):
        return self.view_transform(x, points, lidar2image, camera_intrinsics, camera2lidar, img_aug_matrix, lidar_aug_matrix, img_metas)

    def extract_feat(self, batch_inputs_dict, batch_input_metas):
        imgs = batch_inputs_dict.get("imgs", None)
        points = batch_inputs_dict.get("points", None)
        features = []
        if imgs is not None:
            lidar2image, camera_intrinsics, camera2lidar = [], [], []
            img_aug_matrix, lidar_aug_matrix = [], []
            for i, meta in enumerate(batch_input_metas):
                lidar2image.append(meta["lidar2img"])
                camera_intrinsics.append(meta["cam2img"])
                camera2lidar.append(meta["cam2lidar"])
                img_aug_matrix.append(meta.get("img_aug_matrix", np.eye(4)))
                lidar_aug_matrix.append(meta.get("lidar_aug_matrix", np.eye(4)))
            lidar2image = imgs.new_tensor(np.asarray(lidar2image))
            camera_intrinsics = imgs.new_tensor(np.array(camera_intrinsics))
            camera2lidar = imgs.new_tensor(np.asarray(camera2lidar))
            img_aug_matrix = imgs.new_tensor(np.asarray(img_aug_matrix))
            lidar_aug_matrix = imgs.new_tensor(np.asarray(lidar_aug_matrix))
            img_feature = self.extract_img_feat(imgs, deepcopy(points), lidar2image, camera_intrinsics, camera2lidar,
                                                img_aug_matrix, lidar_aug_matrix, batch_input_metas)
            features.append(img_feature)
        pts_feature = self.extract_pts_feat(batch_inputs_dict)
        features.append(pts_feature)
        return F.relu(self.fusion_layer(torch.cat(features, dim=1)))

    def loss(self, batch_inputs_dict, heatmap_targets, batch_input_metas):
        feats = self.extract_feat(batch_inputs_dict, batch_input_metas)
        return F.binary_cross_entropy_with_logits(self.bbox_head(feats), heatmap_targets)


def make_meta(shift):
    cam2img = np.array([[4.0, 0, 4.0, 0], [0, 4.0, 4.0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
    lidar2cam = np.array([[0, -1.0, 0, 0], [0, 0, -1.0, 0], [1.0, 0, 0, 0], [0, 0, 0, 1]])
    lidar_aug = np.eye(4)
    lidar_aug[:3, 3] = shift
    return {"lidar2img": np.stack([cam2img @ lidar2cam]), "cam2img": np.stack([cam2img]),
            "cam2lidar": np.stack([np.linalg.inv(lidar2cam)]), "img_aug_matrix": np.stack([np.eye(4)]),
            "lidar_aug_matrix": lidar_aug}


model = BEVFusion()
points = [torch.cat([torch.rand(12, 3) * 6.0 - 3.0 + torch.tensor([4.0, 0.0, 0.0]), torch.rand(12, 1)], dim=1) for _ in range(2)]
batch_inputs_dict = {"imgs": torch.randn(2, 1, 3, 8, 8), "points": points}
batch_input_metas = [make_meta([1.5, -1.0, 0.2]), make_meta([-2.0, 1.0, 0.0])]
heatmap_targets = torch.rand(2, 2, 4, 4)
loss = model.loss(batch_inputs_dict, heatmap_targets, batch_input_metas)
loss.backward()
