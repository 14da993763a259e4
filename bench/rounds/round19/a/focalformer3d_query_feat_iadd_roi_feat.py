# label: hazard raises
# why: from the second decoder layer on, query_feat += roi_feat overwrites the previous layer's query features in place, but that layer's prediction head (a Conv1d) saved them for backward.
# source: https://github.com/NVlabs/FocalFormer3D/issues/25
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DecoderLayer(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, 2)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_model * 2), nn.ReLU(), nn.Linear(d_model * 2, d_model))

    def forward(self, query, value, query_pos, reference_points):
        q = query + query_pos
        out, _ = self.attn(q, value, value)
        query = query + out
        query = query + self.ffn(query)
        return query, reference_points


class FocalDecoderHead(nn.Module):
    def __init__(self, hidden_channel=8, num_decoder_layers=2, roi_feats=2, num_classes=3):
        super().__init__()
        self.num_decoder_layers = num_decoder_layers
        self.roi_feats = roi_feats
        self.decoder = nn.ModuleList([DecoderLayer(hidden_channel) for _ in range(num_decoder_layers)])
        self.roi_mlp = nn.Sequential(nn.Linear(hidden_channel * roi_feats ** 2, hidden_channel), nn.ReLU())
        self.pos_embed = nn.Linear(2, hidden_channel)
        self.prediction_heads = nn.ModuleList([
            nn.ModuleDict({'center': nn.Conv1d(hidden_channel, 2, 1), 'heatmap': nn.Conv1d(hidden_channel, num_classes, 1)})
            for _ in range(num_decoder_layers)
        ])

    def get_dense_grid_points(self, centers):
        offsets = torch.linspace(-0.05, 0.05, self.roi_feats)
        gy, gx = torch.meshgrid(offsets, offsets, indexing='ij')
        grid = torch.stack([gx, gy], -1).view(1, 1, -1, 2)
        return centers[:, :, None, :] + grid

    def forward(self, lidar_feat, query_feat, query_pos):
        batch_size, C, H, W = lidar_feat.shape
        lidar_feat_flatten = lidar_feat.view(batch_size, C, -1)
        ret_dicts = []
        query_box = None
        for i in range(self.num_decoder_layers):
            if query_box is not None:
                grid_points = self.get_dense_grid_points(query_box)  # B, Pq, roi^2, 2 in [-1, 1]
                roi_feat = F.grid_sample(lidar_feat, grid_points, align_corners=False)  # B, C, Pq, roi^2
                num_proposals = roi_feat.shape[2]
                roi_feat = roi_feat.permute(0, 2, 1, 3).reshape(batch_size * num_proposals, C * self.roi_feats ** 2)
                roi_feat = self.roi_mlp(roi_feat)
                roi_feat = roi_feat.view(batch_size, num_proposals, C).transpose(1, 2)
                query_feat += roi_feat  # <-- IPL001: the previous layer's prediction head saved query_feat for backward

            query_pos_embed = self.pos_embed(query_pos)
            query_feat, _ = self.decoder[i](
                query=query_feat.permute(2, 0, 1),
                value=lidar_feat_flatten.permute(2, 0, 1),
                query_pos=query_pos_embed.permute(1, 0, 2),
                reference_points=query_pos)
            query_feat = query_feat.permute(1, 2, 0)

            res_layer = {k: head(query_feat) for k, head in self.prediction_heads[i].items()}
            query_box = res_layer['center'].permute(0, 2, 1).tanh()
            ret_dicts.append(res_layer)
        return ret_dicts


head = FocalDecoderHead()
lidar_feat = torch.randn(2, 8, 6, 6)
query_feat = torch.randn(2, 8, 5)
query_pos = torch.rand(2, 5, 2)
ret_dicts = head(lidar_feat, query_feat, query_pos)
heatmap_target = torch.rand(2, 3, 5)
loss = sum(F.binary_cross_entropy_with_logits(d['heatmap'], heatmap_target) for d in ret_dicts)
loss.backward()
