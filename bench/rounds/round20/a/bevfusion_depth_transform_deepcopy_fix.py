# label: safe
# why: after the fix extract_feat hands the camera branch deepcopy(points), so the in-place inverse-augmentation edits in the depth transform hit a private copy and the lidar branch still voxelizes the original points.
# source: https://github.com/open-mmlab/mmdetection3d/commit/40a97e21cde40ec0fd6da3b806b8e2693c24c157 (post-fix code: extract_img_feat(imgs, deepcopy(points), ...))
from copy import deepcopy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BaseDepthTransform(nn.Module):
    def __init__(self, in_channels, out_channels, image_size):
        super().__init__()
        self.image_size = image_size
        self.depthnet = nn.Conv2d(in_channels + 1, out_channels, 1)

    def get_cam_feats(self, x, d):
        B, N, C, H, W = x.shape
        x = torch.cat([x, d], dim=2).view(B * N, C + 1, H, W)
        return self.depthnet(x).view(B, N, -1, H, W)

    def forward(self, img, points, lidar2image, img_aug_matrix, lidar_aug_matrix):
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
            cur_coords = cur_coords[..., [1, 0]]

            on_img = ((cur_coords[..., 0] < self.image_size[0])
                      & (cur_coords[..., 0] >= 0)
                      & (cur_coords[..., 1] < self.image_size[1])
                      & (cur_coords[..., 1] >= 0))
            for c in range(on_img.shape[0]):
                masked_coords = cur_coords[c, on_img[c]].long()
                masked_dist = dist[c, on_img[c]]
                depth[b, c, 0, masked_coords[:, 0], masked_coords[:, 1]] = masked_dist

        x = self.get_cam_feats(img, depth)
        return x.mean(dim=1)


class BEVFusion(nn.Module):
    def __init__(self):
        super().__init__()
        self.img_backbone = nn.Conv2d(3, 4, 3, padding=1)
        self.vtransform = BaseDepthTransform(4, 4, (8, 8))
        self.pts_encoder = nn.Conv2d(1, 4, 1)
        self.fusion_layer = nn.Conv2d(8, 4, 1)

    def extract_img_feat(self, x, points, lidar2image, img_aug_matrix, lidar_aug_matrix):
        B, N, C, H, W = x.size()
        x = x.view(B * N, C, H, W).contiguous()
        x = self.img_backbone(x)
        BN, C, H, W = x.size()
        x = x.view(B, int(BN / B), C, H, W)
        return self.vtransform(x, points, lidar2image, img_aug_matrix, lidar_aug_matrix)

    @torch.no_grad()
    def voxelize(self, points):
        bev = torch.zeros(len(points), 1, 8, 8)
        for k, res in enumerate(points):
            ij = res[:, :2].floor().long().clamp(0, 7)
            bev[k, 0].index_put_((ij[:, 0], ij[:, 1]), res[:, 2], accumulate=True)
        return bev

    def extract_pts_feat(self, points):
        return self.pts_encoder(self.voxelize(points))

    def extract_feat(self, imgs, points, lidar2image, img_aug_matrix, lidar_aug_matrix):
        features = []
        img_feature = self.extract_img_feat(imgs, deepcopy(points), lidar2image, img_aug_matrix, lidar_aug_matrix)
        features.append(img_feature)
        pts_feature = self.extract_pts_feat(points)
        features.append(pts_feature)
        return self.fusion_layer(torch.cat(features, dim=1))


def main():
    model = BEVFusion()
    imgs = torch.rand(2, 2, 3, 8, 8)
    points = [torch.rand(20, 4) * torch.tensor([8.0, 8.0, 4.0, 1.0]) + torch.tensor([0.0, 0.0, 1.0, 0.0]) for _ in range(2)]
    lidar2image = torch.eye(4).repeat(2, 2, 1, 1)
    img_aug_matrix = torch.eye(4).repeat(2, 2, 1, 1)
    lidar_aug_matrix = torch.eye(4).repeat(2, 1, 1)
    lidar_aug_matrix[:, :3, 3] = torch.tensor([1.5, -0.5, 0.25])
    feats = model.extract_feat(imgs, points, lidar2image, img_aug_matrix, lidar_aug_matrix)
    loss = feats.pow(2).mean()
    loss.backward()
    return feats.detach(), model.pts_encoder.weight.grad, points[0]


feats, grad, pts0 = main()
