# label: hazard raises
# why: the proposal refinement adds the residual with `net += original_feature`, but net is the output of F.relu, which relu saved for its backward.
# source: https://github.com/zaiweizhang/H3DNet/issues/29
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def decode_scores(net, end_points, num_class, mode=''):
    net_transposed = net.transpose(2, 1)
    end_points['objectness_scores' + mode] = net_transposed[:, :, 0:2]
    end_points['center' + mode] = end_points['aggregated_vote_xyz'] + net_transposed[:, :, 2:5]
    end_points['sem_cls_scores' + mode] = net_transposed[:, :, 5:5 + num_class]
    return end_points


class ProposalModuleRefine(nn.Module):
    def __init__(self, num_class=3, num_proposal=4, seed_feat_dim=8):
        super().__init__()
        self.num_class = num_class
        self.num_proposal = num_proposal
        self.conv_surface1 = nn.Conv1d(seed_feat_dim, 8, 1)
        self.bn_surface1 = nn.BatchNorm1d(8)
        self.conv_line1 = nn.Conv1d(seed_feat_dim, 8, 1)
        self.bn_line1 = nn.BatchNorm1d(8)
        self.conv_refine1 = nn.Conv1d(16, 8, 1)
        self.bn_refine1 = nn.BatchNorm1d(8)
        self.conv_refine2 = nn.Conv1d(8, 8, 1)
        self.bn_refine2 = nn.BatchNorm1d(8)
        self.conv_refine4 = nn.Conv1d(8, 2 + 3 + num_class, 1)

    def forward(self, obj_center, obj_size, features, surface_features, line_features, end_points):
        batch_size = obj_center.shape[0]
        object_proposal = self.num_proposal
        original_feature = features

        offset_x = torch.zeros_like(obj_size)
        offset_y = torch.zeros_like(obj_size)
        offset_z = torch.zeros_like(obj_size)
        offset_x[:, :, 0] = obj_size[:, :, 0] / 2.0
        offset_y[:, :, 1] = obj_size[:, :, 1] / 2.0
        offset_z[:, :, 2] = obj_size[:, :, 2] / 2.0
        obj_line_center = torch.cat((obj_center + offset_z + offset_x, obj_center + offset_z - offset_x,
                                     obj_center - offset_z + offset_y, obj_center - offset_z - offset_y), dim=1)
        end_points['line_center_object'] = obj_line_center

        surface_features = F.relu(self.bn_surface1(self.conv_surface1(surface_features))).view(batch_size, -1, 6, object_proposal).contiguous()
        line_features = F.relu(self.bn_line1(self.conv_line1(line_features))).view(batch_size, -1, 12, object_proposal).contiguous()
        surface_pool_feature = F.max_pool2d(surface_features, (6, 1), stride=1).squeeze(2)
        line_pool_feature = F.max_pool2d(line_features, (12, 1), stride=1).squeeze(2)
        combine_feature = torch.cat((surface_pool_feature, line_pool_feature), dim=1)

        net = F.relu(self.bn_refine1(self.conv_refine1(combine_feature)))
        net += original_feature  # <-- IPL001: net is relu's saved output  ### Residual feature
        net = F.relu(self.bn_refine2(self.conv_refine2(net)))
        net = self.conv_refine4(net)

        end_points = decode_scores(net, end_points, self.num_class, mode='opt')
        return end_points


B, P, C = 2, 4, 8
module = ProposalModuleRefine(num_proposal=P, seed_feat_dim=C)
backbone = nn.Conv1d(3, C, 1)
xyz = torch.rand(B, 3, P)
features = backbone(xyz)
end_points = {'aggregated_vote_xyz': xyz.transpose(1, 2)}
obj_center = xyz.transpose(1, 2)
obj_size = torch.rand(B, P, 3, requires_grad=True)
surface_features = torch.randn(B, C, 6 * P)
line_features = torch.randn(B, C, 12 * P)
end_points = module(obj_center, obj_size, features, surface_features, line_features, end_points)
loss = end_points['objectness_scoresopt'].pow(2).mean() + end_points['centeropt'].abs().mean() \
    + end_points['line_center_object'].mean()
loss.backward()
