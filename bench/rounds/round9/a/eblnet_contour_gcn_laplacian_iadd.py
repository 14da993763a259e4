# label: hazard raises
# why: in the GCN "Laplacian smoothing" step `z += x` adds into the nn.ReLU output that ReLU saved for backward
# source: https://github.com/hehao13/EBLNet/issues/9
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def get_uncertain_point_coords_on_grid(uncertainty_map, num_points):
    R, _, H, W = uncertainty_map.shape
    num_points = min(H * W, num_points)
    point_indices = torch.topk(uncertainty_map.view(R, H * W), k=num_points, dim=1)[1]
    point_coords = torch.zeros(R, num_points, 2, dtype=torch.float, device=uncertainty_map.device)
    point_coords[:, :, 0] = point_indices % W
    point_coords[:, :, 1] = point_indices // W
    return point_indices, point_coords


def point_sample(input, point_indices, **kwargs):
    N, C, H, W = input.shape
    point_indices = point_indices.unsqueeze(1).expand(-1, C, -1)
    flatten_input = input.flatten(start_dim=2)
    sampled_feats = flatten_input.gather(dim=2, index=point_indices).view_as(point_indices)  # n c p
    return sampled_feats


class GCN(nn.Module):
    def __init__(self, node_num, node_fea):
        super(GCN, self).__init__()
        self.node_num = node_num
        self.node_fea = node_fea
        self.conv_adj = nn.Conv1d(self.node_num, self.node_num, kernel_size=1, bias=False)
        self.bn_adj = nn.BatchNorm1d(self.node_num)
        self.conv_wg = nn.Conv1d(self.node_fea, self.node_fea, kernel_size=1, bias=False)
        self.bn_wg = nn.BatchNorm1d(self.node_fea)
        self.relu = nn.ReLU()

    def forward(self, x):
        z = self.conv_adj(x)
        z = self.bn_adj(z)
        z = self.relu(z)

        # Laplacian smoothing
        z += x  # <-- IPL001: z is the ReLU output saved for ReLU's backward
        z = z.transpose(1, 2).contiguous()  # (b, d, n)
        z = self.conv_wg(z)
        z = self.bn_wg(z)
        z = self.relu(z)
        z = z.transpose(1, 2).contiguous()  # (b, n, d)
        return z


class ContourPointGCN(nn.Module):
    def __init__(self, inplance, num_points, thresholds=0.8):
        super(ContourPointGCN, self).__init__()
        self.num_points = num_points
        self.thresholds = thresholds
        self.gcn = GCN(num_points, inplance)

    def forward(self, x, edge):
        B, C, H, W = x.size()
        edge[edge < self.thresholds] = 0
        edge_index, point_coords = get_uncertain_point_coords_on_grid(edge, self.num_points)
        gcn_features = point_sample(x, edge_index).permute(0, 2, 1)  # b, n, c
        gcn_features_reasoned = self.gcn(gcn_features)
        gcn_features_reasoned = gcn_features_reasoned.permute(0, 2, 1)  # b, c, n
        edge_index = edge_index.unsqueeze(1).expand(-1, C, -1)
        final_features = x.reshape(B, C, H * W).scatter(2, edge_index, gcn_features_reasoned).view(B, C, H, W)
        return final_features


class EBLNetHead(nn.Module):
    def __init__(self, channels=8, num_points=6, num_classes=2):
        super().__init__()
        self.edge_out_pre = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1, bias=False),
                                          nn.BatchNorm2d(channels), nn.ReLU(inplace=True))
        self.edge_out = nn.Conv2d(channels, 1, kernel_size=1, bias=False)
        self.refine = ContourPointGCN(channels, num_points, 0.5)
        self.final_seg_out = nn.Conv2d(channels, num_classes, kernel_size=1, bias=False)

    def forward(self, seg_body, seg_edge):
        seg_edge_pre = self.edge_out_pre(seg_edge)
        seg_edge_out_pre = self.edge_out(seg_edge_pre)
        seg_out = seg_body + seg_edge
        seg_out = self.refine(seg_out, torch.sigmoid(seg_edge_out_pre.clone().detach()))
        return self.final_seg_out(seg_out), seg_edge_out_pre


head = EBLNetHead()
seg_body = torch.randn(2, 8, 5, 5, requires_grad=True)
seg_edge = torch.randn(2, 8, 5, 5, requires_grad=True)
seg_final_out, seg_edge_out = head(seg_body, seg_edge)
gts = torch.randint(0, 2, (2, 5, 5))
edge_gts = (torch.rand(2, 1, 5, 5) > 0.5).float()
main_loss = F.cross_entropy(seg_final_out, gts) + F.binary_cross_entropy_with_logits(seg_edge_out, edge_gts)
main_loss.backward()
