# label: hazard raises
# why: VoxelFeatureExtractor masks padded points with `x *= mask`; after the final F.relu this rewrites the ReLU output that ReluBackward saved, so the voxel detector cannot train.
# source: https://github.com/dd-iuonac/object-detector-in-carla/issues/61
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def get_paddings_indicator(actual_num, max_num, axis=0):
    """Create boolean mask by actually number of a padded tensor."""
    actual_num = torch.unsqueeze(actual_num, axis + 1)
    max_num_shape = [1] * len(actual_num.shape)
    max_num_shape[axis + 1] = -1
    max_num = torch.arange(max_num, dtype=torch.int, device=actual_num.device).view(max_num_shape)
    paddings_indicator = actual_num.int() > max_num
    return paddings_indicator


class VFELayer(nn.Module):
    def __init__(self, in_channels, out_channels, use_norm=True, name='vfe'):
        super(VFELayer, self).__init__()
        self.name = name
        self.units = int(out_channels / 2)
        self.linear = nn.Linear(in_channels, self.units, bias=not use_norm)
        self.norm = nn.BatchNorm1d(self.units, eps=1e-3, momentum=0.01) if use_norm else nn.Identity()

    def forward(self, inputs):
        # [K, T, 7] tensordot [7, units] = [K, T, units]
        voxel_count = inputs.shape[1]
        x = self.linear(inputs)
        x = self.norm(x.permute(0, 2, 1).contiguous()).permute(0, 2, 1).contiguous()
        pointwise = F.relu(x)
        # [K, T, units]
        aggregated = torch.max(pointwise, dim=1, keepdim=True)[0]
        # [K, 1, units]
        repeated = aggregated.repeat(1, voxel_count, 1)
        concatenated = torch.cat([pointwise, repeated], dim=2)
        # [K, T, 2 * units]
        return concatenated


class VoxelFeatureExtractor(nn.Module):
    def __init__(self, num_input_features=4, use_norm=True, num_filters=[8, 16], with_distance=False,
                 name='VoxelFeatureExtractor'):
        super(VoxelFeatureExtractor, self).__init__()
        self.name = name
        num_input_features += 3  # add mean features
        if with_distance:
            num_input_features += 1
        self._with_distance = with_distance
        self.vfe1 = VFELayer(num_input_features, num_filters[0], use_norm)
        self.vfe2 = VFELayer(num_filters[0], num_filters[1], use_norm)
        self.linear = nn.Linear(num_filters[1], num_filters[1], bias=not use_norm)
        self.norm = nn.BatchNorm1d(num_filters[1], eps=1e-3, momentum=0.01)

    def forward(self, features, num_voxels, coors):
        # features: [concated_num_points, num_voxel_size, 3(4)]
        # num_voxels: [concated_num_points]
        points_mean = features[:, :, :3].sum(dim=1, keepdim=True) / num_voxels.type_as(features).view(-1, 1, 1)
        features_relative = features[:, :, :3] - points_mean
        if self._with_distance:
            points_dist = torch.norm(features[:, :, :3], 2, 2, keepdim=True)
            features = torch.cat([features, features_relative, points_dist], dim=-1)
        else:
            features = torch.cat([features, features_relative], dim=-1)
        voxel_count = features.shape[1]
        mask = get_paddings_indicator(num_voxels, voxel_count, axis=0)
        mask = torch.unsqueeze(mask, -1).type_as(features)
        x = self.vfe1(features)
        x *= mask
        x = self.vfe2(x)
        x *= mask
        x = self.linear(x)
        x = self.norm(x.permute(0, 2, 1).contiguous()).permute(0, 2, 1).contiguous()
        x = F.relu(x)
        x *= mask  # <-- IPL001: rewrites the ReLU output saved for ReluBackward
        # x: [concated_num_points, num_voxel_size, 128]
        voxelwise = torch.max(x, dim=1)[0]
        return voxelwise


vfe = VoxelFeatureExtractor()
rpn_head = nn.Linear(16, 7)
voxels = torch.randn(6, 5, 4)
num_points = torch.tensor([5, 3, 1, 4, 2, 5])
coors = torch.zeros(6, 4, dtype=torch.int32)
voxel_features = vfe(voxels, num_points, coors)
box_preds = rpn_head(voxel_features)
targets = torch.randn(6, 7)
loss = F.smooth_l1_loss(box_preds, targets)
loss.backward()
