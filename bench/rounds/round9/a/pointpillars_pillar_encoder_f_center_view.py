# label: hazard silent
# why: in the legacy path f_center = features[:, :, :2] is a view, so the in-place offsets written into f_center also overwrite the x/y columns of features, which are concatenated and used for points_dist afterwards
# source: https://github.com/open-mmlab/mmdetection3d/issues/1150
import torch
from torch import nn

torch.manual_seed(0)


class PFNLayer(nn.Module):
    def __init__(self, in_channels, out_channels, last_layer=False):
        super().__init__()
        self.last_vfe = last_layer
        if not self.last_vfe:
            out_channels = out_channels // 2
        self.units = out_channels
        self.norm = nn.BatchNorm1d(self.units, eps=1e-3, momentum=0.01)
        self.linear = nn.Linear(in_channels, self.units, bias=False)

    def forward(self, inputs, num_voxels=None):
        x = self.linear(inputs)
        x = self.norm(x.permute(0, 2, 1).contiguous()).permute(0, 2, 1).contiguous()
        x = torch.relu(x)
        x_max = torch.max(x, dim=1, keepdim=True)[0]
        if self.last_vfe:
            return x_max
        x_repeat = x_max.repeat(1, inputs.shape[1], 1)
        return torch.cat([x, x_repeat], dim=2)


class PillarFeatureNet(nn.Module):
    def __init__(self, in_channels=4, feat_channels=(8,), with_distance=True, with_cluster_center=True,
                 with_voxel_center=True, voxel_size=(0.2, 0.2, 4), point_cloud_range=(0, -4.0, -3, 8.0, 4.0, 1),
                 legacy=True):
        super(PillarFeatureNet, self).__init__()
        if with_cluster_center:
            in_channels += 3
        if with_voxel_center:
            in_channels += 2
        if with_distance:
            in_channels += 1
        self._with_distance = with_distance
        self._with_cluster_center = with_cluster_center
        self._with_voxel_center = with_voxel_center
        self.legacy = legacy
        feat_channels = [in_channels] + list(feat_channels)
        pfn_layers = []
        for i in range(len(feat_channels) - 1):
            in_filters = feat_channels[i]
            out_filters = feat_channels[i + 1]
            last_layer = i >= len(feat_channels) - 2
            pfn_layers.append(PFNLayer(in_filters, out_filters, last_layer=last_layer))
        self.pfn_layers = nn.ModuleList(pfn_layers)
        self.vx = voxel_size[0]
        self.vy = voxel_size[1]
        self.x_offset = self.vx / 2 + point_cloud_range[0]
        self.y_offset = self.vy / 2 + point_cloud_range[1]

    def forward(self, features, num_points, coors):
        features_ls = [features]
        # Find distance of x, y, and z from cluster center
        if self._with_cluster_center:
            points_mean = features[:, :, :3].sum(dim=1, keepdim=True) / num_points.type_as(features).view(-1, 1, 1)
            f_cluster = features[:, :, :3] - points_mean
            features_ls.append(f_cluster)

        # Find distance of x, y, and z from pillar center
        dtype = features.dtype
        if self._with_voxel_center:
            if not self.legacy:
                f_center = torch.zeros_like(features[:, :, :2])
                f_center[:, :, 0] = features[:, :, 0] - (coors[:, 3].to(dtype).unsqueeze(1) * self.vx + self.x_offset)
                f_center[:, :, 1] = features[:, :, 1] - (coors[:, 2].to(dtype).unsqueeze(1) * self.vy + self.y_offset)
            else:
                f_center = features[:, :, :2]
                f_center[:, :, 0] = f_center[:, :, 0] - (  # <-- IPL002: writes through a view into features[:, :, 0]
                    coors[:, 3].type_as(features).unsqueeze(1) * self.vx + self.x_offset)
                f_center[:, :, 1] = f_center[:, :, 1] - (  # <-- IPL002: same for features[:, :, 1]
                    coors[:, 2].type_as(features).unsqueeze(1) * self.vy + self.y_offset)
            features_ls.append(f_center)

        if self._with_distance:
            points_dist = torch.norm(features[:, :, :3], 2, 2, keepdim=True)
            features_ls.append(points_dist)

        # Combine together feature decorations
        features = torch.cat(features_ls, dim=-1)
        for pfn in self.pfn_layers:
            features = pfn(features, num_points)
        return features.squeeze(1)


pillar_encoder = PillarFeatureNet(legacy=True)
voxels = torch.rand(5, 6, 4) * torch.tensor([8.0, 8.0, 4.0, 1.0]) - torch.tensor([0.0, 4.0, 3.0, 0.0])
num_points = torch.tensor([6, 4, 3, 6, 2])
coors = torch.tensor([[0, 0, 3, 5], [0, 0, 10, 20], [0, 0, 25, 2], [1, 0, 7, 7], [1, 0, 30, 39]])
pillar_features = pillar_encoder(voxels, num_points, coors)
loss = pillar_features.pow(2).mean()
loss.backward()
raw_voxels_after = voxels
