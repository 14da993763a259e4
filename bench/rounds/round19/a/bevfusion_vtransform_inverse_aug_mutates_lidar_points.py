# label: hazard silent
# why: cur_coords is a slice view of points[b], so the inverse-augmentation cur_coords -= ... in the camera depth branch silently shifts the caller's lidar points, which the lidar branch then voxelizes with the wrong coordinates.
# source: https://github.com/mit-han-lab/bevfusion/issues/419
import torch
import torch.nn as nn

torch.manual_seed(0)


class BaseDepthTransform(nn.Module):
    def __init__(self, image_size=(8, 8)):
        super().__init__()
        self.image_size = image_size
        self.depth_net = nn.Conv2d(3 + 3, 4, 1)

    def forward(self, img, points, lidar2image, img_aug_matrix, lidar_aug_matrix):
        batch_size = len(points)
        depth = torch.zeros(batch_size, img.shape[1], 1, *self.image_size).to(points[0].device)

        for b in range(batch_size):
            cur_coords = points[b][:, :3]
            cur_img_aug_matrix = img_aug_matrix[b]
            cur_lidar_aug_matrix = lidar_aug_matrix[b]
            cur_lidar2image = lidar2image[b]

            # inverse aug
            cur_coords -= cur_lidar_aug_matrix[:3, 3]  # <-- IPL004: cur_coords is a view of the caller's points[b]
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

            on_img = (
                (cur_coords[..., 0] < self.image_size[0]) & (cur_coords[..., 0] >= 0)
                & (cur_coords[..., 1] < self.image_size[1]) & (cur_coords[..., 1] >= 0)
            )
            for c in range(on_img.shape[0]):
                masked_coords = cur_coords[c, on_img[c]].long()
                masked_dist = dist[c, on_img[c]]
                depth[b, c, 0, masked_coords[:, 0], masked_coords[:, 1]] = masked_dist

        x = torch.cat([depth[:, :, 0], img.mean(2)], 1)
        return self.depth_net(x)


def voxelize_to_bev(points, grid=8, extent=10.0):
    bevs = []
    for pts in points:
        ij = ((pts[:, :2] + extent) / (2 * extent) * grid).long().clamp(0, grid - 1)
        bev = torch.zeros(grid, grid)
        bev.index_put_((ij[:, 0], ij[:, 1]), pts[:, 3], accumulate=True)
        bevs.append(bev)
    return torch.stack(bevs)[:, None]


vtransform = BaseDepthTransform()
fuser = nn.Conv2d(4 + 1, 2, 1)

points = [torch.cat([torch.randn(30, 2) * 4, torch.rand(30, 1) * 2, torch.rand(30, 1)], 1) for _ in range(2)]
img = torch.rand(2, 3, 2, 8, 8)  # B, N_cam(3 used as channels), C, H, W
lidar2image = torch.eye(4).repeat(2, 3, 1, 1)
lidar2image[..., 0, 3] = 4.0
lidar2image[..., 1, 3] = 4.0
lidar2image[..., 2, 3] = 5.0
img_aug_matrix = torch.eye(4).repeat(2, 3, 1, 1)
lidar_aug_matrix = torch.eye(4).repeat(2, 1, 1)
lidar_aug_matrix[:, :3, 3] = torch.tensor([1.5, -2.0, 0.3])

cam_bev = vtransform(img, points, lidar2image, img_aug_matrix, lidar_aug_matrix)
lidar_bev = voxelize_to_bev(points)
fused = fuser(torch.cat([cam_bev, lidar_bev], 1))
loss = fused.pow(2).mean()
loss.backward()
