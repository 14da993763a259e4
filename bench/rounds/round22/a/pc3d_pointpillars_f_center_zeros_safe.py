# label: safe
# why: the fix builds f_center with torch.zeros_like and writes the centred x/y into that fresh buffer from features (f_center[:, :, 0] = features[:, :, 0] - ...), so the caller's features are only read; the in-place writes touch a new tensor that nothing else aliases, and features *= mask acts on the cat output.
# source: https://github.com/traveller59/second.pytorch/commit/1e27b0c0dcd667ccbc207ccf722e03cbd9782078 ("bugfix: do not modify features in place", second/pytorch/models/pointpillars.py)
import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


def get_paddings_indicator(actual_num, max_num, axis=0):
    actual_num = torch.unsqueeze(actual_num, axis + 1)
    max_num_shape = [1] * len(actual_num.shape)
    max_num_shape[axis + 1] = -1
    max_num = torch.arange(max_num, dtype=torch.int, device=actual_num.device).view(max_num_shape)
    paddings_indicator = actual_num.int() > max_num
    return paddings_indicator


class PFNLayer(nn.Module):
    def __init__(self, in_channels, out_channels, use_norm=True, last_layer=False):
        super().__init__()
        self.name = 'PFNLayer'
        self.last_vfe = last_layer
        if not self.last_vfe:
            out_channels = out_channels // 2
        self.units = out_channels
        self.linear = nn.Linear(in_channels, self.units, bias=False)
        self.norm = nn.BatchNorm1d(self.units, eps=1e-3, momentum=0.01)

    def forward(self, inputs):
        x = self.linear(inputs)
        x = self.norm(x.permute(0, 2, 1).contiguous()).permute(0, 2, 1).contiguous()
        x = F.relu(x)
        x_max = torch.max(x, dim=1, keepdim=True)[0]
        if self.last_vfe:
            return x_max
        else:
            x_repeat = x_max.repeat(1, inputs.shape[1], 1)
            return torch.cat([x, x_repeat], dim=2)


class PillarFeatureNet(nn.Module):
    def __init__(self, num_input_features=4, use_norm=True, num_filters=(16,), with_distance=False,
                 voxel_size=(0.2, 0.2, 4), pc_range=(0, -40, -3, 70.4, 40, 1)):
        super().__init__()
        self.name = 'PillarFeatureNet'
        num_input_features += 5
        if with_distance:
            num_input_features += 1
        self._with_distance = with_distance
        num_filters = [num_input_features] + list(num_filters)
        pfn_layers = []
        for i in range(len(num_filters) - 1):
            last_layer = not (i < len(num_filters) - 2)
            pfn_layers.append(PFNLayer(num_filters[i], num_filters[i + 1], use_norm, last_layer=last_layer))
        self.pfn_layers = nn.ModuleList(pfn_layers)
        # Need pillar (voxel) size and x/y offset in order to calculate pillar offset
        self.vx = voxel_size[0]
        self.vy = voxel_size[1]
        self.x_offset = self.vx / 2 + pc_range[0]
        self.y_offset = self.vy / 2 + pc_range[1]

    def forward(self, features, num_voxels, coors):
        # Find distance of x, y, and z from cluster center
        points_mean = features[:, :, :3].sum(dim=1, keepdim=True) / num_voxels.type_as(features).view(-1, 1, 1)
        f_cluster = features[:, :, :3] - points_mean

        # Find distance of x, y, and z from pillar center
        f_center = torch.zeros_like(features[:, :, :2])
        f_center[:, :, 0] = features[:, :, 0] - (coors[:, 3].float().unsqueeze(1) * self.vx + self.x_offset)
        f_center[:, :, 1] = features[:, :, 1] - (coors[:, 2].float().unsqueeze(1) * self.vy + self.y_offset)

        # Combine together feature decorations
        features_ls = [features, f_cluster, f_center]
        if self._with_distance:
            points_dist = torch.norm(features[:, :, :3], 2, 2, keepdim=True)
            features_ls.append(points_dist)
        features = torch.cat(features_ls, dim=-1)

        # empty pillars remain set to zeros.
        voxel_count = features.shape[1]
        mask = get_paddings_indicator(num_voxels, voxel_count, axis=0)
        mask = torch.unsqueeze(mask, -1).type_as(features)
        features *= mask

        # Forward pass through PFNLayers
        for pfn in self.pfn_layers:
            features = pfn(features)
        return features.squeeze()


def main():
    net = PillarFeatureNet(num_input_features=4, num_filters=(16,), with_distance=True)
    num_pillars, max_points = 5, 6
    voxels = torch.rand(num_pillars, max_points, 4) * torch.tensor([70.4, 80.0, 4.0, 1.0]) + torch.tensor([0.0, -40.0, -3.0, 0.0])
    num_points = torch.tensor([6, 3, 1, 4, 2])
    coors = torch.stack([torch.zeros(num_pillars, dtype=torch.long), torch.zeros(num_pillars, dtype=torch.long),
                         (voxels[:, 0, 1] + 40.0).div(0.2).long(), voxels[:, 0, 0].div(0.2).long()], dim=1)
    voxel_features = net(voxels, num_points, coors)
    loss = voxel_features.pow(2).mean()
    loss.backward()
    return voxel_features.detach(), net.pfn_layers[0].linear.weight.grad, voxels


pillar_features, grad, voxels = main()
