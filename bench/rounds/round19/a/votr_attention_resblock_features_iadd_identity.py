# label: hazard raises
# why: after the submanifold attention blocks, sp_tensor.features is the output of output_layer's ReLU (saved for its backward), and AttentionResBlock adds the identity into it with +=.
# source: https://github.com/PointsCoder/VOTR/issues/23
import torch
import torch.nn as nn

torch.manual_seed(0)


class SparseTensor(object):
    def __init__(self, features, indices, spatial_shape, batch_size):
        self.features = features
        self.indices = indices
        self.spatial_shape = spatial_shape
        self.batch_size = batch_size


class SparseAttention3d(nn.Module):
    """Strided sparse attention: here a per-voxel projection keeping the voxel set."""

    def __init__(self, input_channels, output_channels):
        super().__init__()
        self.proj = nn.Linear(input_channels, output_channels)
        self.output_layer = nn.Sequential(nn.Linear(output_channels, output_channels), nn.BatchNorm1d(output_channels), nn.ReLU())

    def forward(self, sp_tensor):
        new_features = self.output_layer(self.proj(sp_tensor.features))
        sp_tensor.features = new_features
        return sp_tensor


class SubMAttention3d(nn.Module):
    def __init__(self, input_channels, output_channels, ff_channels, num_heads, dropout=0.0):
        super().__init__()
        self.mhead_attention = nn.MultiheadAttention(input_channels, num_heads, dropout=dropout)
        self.drop_out = nn.Dropout(dropout)
        self.linear1 = nn.Linear(input_channels, ff_channels)
        self.linear2 = nn.Linear(ff_channels, input_channels)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.activation = nn.ReLU()
        self.norm1 = nn.BatchNorm1d(input_channels)
        self.norm2 = nn.BatchNorm1d(input_channels)
        self.output_layer = nn.Sequential(nn.Linear(input_channels, output_channels), nn.BatchNorm1d(output_channels), nn.ReLU())

    def forward(self, sp_tensor):
        voxel_features = sp_tensor.features
        batch_idx = sp_tensor.indices[:, 0]
        attend = torch.zeros_like(voxel_features)
        for b in range(sp_tensor.batch_size):
            mask = batch_idx == b
            feats = voxel_features[mask].unsqueeze(1)  # (N_b, 1, C) as (size, batch, C)
            out, _ = self.mhead_attention(feats, feats, feats)
            attend = attend.index_put((mask.nonzero().squeeze(1),), out.squeeze(1))
        voxel_features = voxel_features + self.drop_out(attend)
        voxel_features = self.norm1(voxel_features)
        act_features = self.linear2(self.dropout1(self.activation(self.linear1(voxel_features))))
        voxel_features = voxel_features + self.dropout2(act_features)
        voxel_features = self.norm2(voxel_features)
        voxel_features = self.output_layer(voxel_features)
        sp_tensor.features = voxel_features
        return sp_tensor


class AttentionResBlock(nn.Module):
    def __init__(self, channels, num_blocks=2):
        super().__init__()
        self.sp_attention = SparseAttention3d(channels, channels)
        self.subm_attention_modules = nn.ModuleList(
            [SubMAttention3d(channels, channels, channels * 2, num_heads=2) for _ in range(num_blocks)])

    def forward(self, sp_tensor):
        sp_tensor = self.sp_attention(sp_tensor)
        indentity_features = sp_tensor.features
        for subm_module in self.subm_attention_modules:
            sp_tensor = subm_module(sp_tensor)
        sp_tensor.features += indentity_features  # <-- IPL001: features is the ReLU output saved by output_layer
        return sp_tensor


voxel_features = torch.randn(10, 8)
voxel_coords = torch.cat([torch.tensor([0] * 6 + [1] * 4)[:, None], torch.randint(0, 4, (10, 3))], 1)
sp_tensor = SparseTensor(voxel_features, voxel_coords, [4, 4, 4], batch_size=2)
backbone = nn.ModuleList([AttentionResBlock(8), AttentionResBlock(8)])
for block in backbone:
    sp_tensor = block(sp_tensor)
head = nn.Linear(8, 3)
loss = head(sp_tensor.features).pow(2).mean()
loss.backward()
