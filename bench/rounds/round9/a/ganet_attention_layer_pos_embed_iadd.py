# label: hazard raises
# why: AttentionLayer adds the sine position embedding with x += pos right after pre_conv, whose ReLU saved its output for backward; the top-down lateral += in the FPN is harmless (plain conv outputs)
# source: https://github.com/Wolfwjs/GANet/issues/20
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PositionEmbeddingSine(nn.Module):
    def __init__(self, num_pos_feats=4, temperature=10000, normalize=False, scale=None):
        super().__init__()
        self.num_pos_feats = num_pos_feats
        self.temperature = temperature
        self.normalize = normalize
        if scale is None:
            scale = 2 * math.pi
        self.scale = scale

    def forward(self, mask):
        not_mask = ~mask
        y_embed = not_mask.cumsum(1, dtype=torch.float32)
        x_embed = not_mask.cumsum(2, dtype=torch.float32)
        dim_t = torch.arange(self.num_pos_feats, dtype=torch.float32)
        dim_t = self.temperature ** (2 * (dim_t // 2) / self.num_pos_feats)
        pos_x = x_embed[:, :, :, None] / dim_t
        pos_y = y_embed[:, :, :, None] / dim_t
        pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos_y = torch.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos = torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)
        return pos


def build_position_encoding(hidden_dim, shape):
    mask = torch.zeros(shape, dtype=torch.bool)
    pos_module = PositionEmbeddingSine(hidden_dim // 2)
    return pos_module(mask)


class ConvModule(nn.Module):
    """conv -> bn -> relu, the way mmcv builds it (inplace=False here)"""

    def __init__(self, in_ch, out_ch, kernel_size, stride=1, padding=0, with_act=True, inplace=False):
        super().__init__()
        self.conv = nn.Conv2d(in_ch, out_ch, kernel_size, stride=stride, padding=padding, bias=not with_act)
        self.bn = nn.BatchNorm2d(out_ch) if with_act else None
        self.activate = nn.ReLU(inplace=inplace) if with_act else None

    def forward(self, x):
        x = self.conv(x)
        if self.bn is not None:
            x = self.bn(x)
        if self.activate is not None:
            x = self.activate(x)
        return x


class AttentionLayer(nn.Module):
    def __init__(self, in_dim, out_dim, ratio=4, stride=1):
        super(AttentionLayer, self).__init__()
        self.pre_conv = ConvModule(in_dim, out_dim, 3, stride=stride, padding=1, inplace=False)
        self.query_conv = nn.Conv2d(out_dim, out_dim // ratio, kernel_size=1)
        self.key_conv = nn.Conv2d(out_dim, out_dim // ratio, kernel_size=1)
        self.value_conv = nn.Conv2d(out_dim, out_dim, kernel_size=1)
        self.final_conv = ConvModule(out_dim, out_dim, 3, padding=1)
        self.softmax = nn.Softmax(dim=-1)
        self.gamma = nn.Parameter(torch.zeros(1))

    def forward(self, x, pos=None):
        x = self.pre_conv(x)
        m_batchsize, _, height, width = x.size()
        if pos is not None:
            x += pos  # <-- IPL001: x is pre_conv's ReLU output, saved by ReluBackward0
        proj_query = self.query_conv(x).view(m_batchsize, -1, width * height).permute(0, 2, 1)
        proj_key = self.key_conv(x).view(m_batchsize, -1, width * height)
        energy = torch.bmm(proj_query, proj_key)
        attention = self.softmax(energy)
        attention = attention.permute(0, 2, 1)
        proj_value = self.value_conv(x).view(m_batchsize, -1, width * height)
        out = torch.bmm(proj_value, attention)
        out = out.view(m_batchsize, -1, height, width)
        out_feat = self.gamma * out + x
        return self.final_conv(out_feat)


class TransConvEncoderModule(nn.Module):
    def __init__(self, attn_in_dims, attn_out_dims, strides, ratios, pos_shape):
        super(TransConvEncoderModule, self).__init__()
        attn_layers = []
        for dim1, dim2, stride, ratio in zip(attn_in_dims, attn_out_dims, strides, ratios):
            attn_layers.append(AttentionLayer(dim1, dim2, ratio, stride))
        self.attn_layers = nn.ModuleList(attn_layers)
        self.pos_embeds = []
        for dim in attn_out_dims:
            self.pos_embeds.append(build_position_encoding(dim, pos_shape))

    def forward(self, src):
        for layer, pos in zip(self.attn_layers, self.pos_embeds):
            src = layer(src, pos.to(src.device))
        return src


class DeformFPN(nn.Module):
    def __init__(self, in_channels, out_channels, trans_cfg):
        super(DeformFPN, self).__init__()
        in_channels = list(in_channels)
        in_channels[-1] = trans_cfg['attn_out_dims'][-1]
        self.trans_head = TransConvEncoderModule(**trans_cfg)
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        for c in in_channels:
            self.lateral_convs.append(ConvModule(c, out_channels, 1, with_act=False))
            self.fpn_convs.append(ConvModule(out_channels, out_channels, 3, padding=1, with_act=False))

    def forward(self, inputs):
        inputs = list(inputs)
        inputs[-1] = self.trans_head(inputs[-1])
        laterals = [lateral_conv(inputs[i]) for i, lateral_conv in enumerate(self.lateral_convs)]
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] += F.interpolate(laterals[i], size=prev_shape, mode='nearest')
        outs = [self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels)]
        return {"features": tuple(outs), "aux_feat": None}


trans_cfg = dict(attn_in_dims=[8, 8], attn_out_dims=[8, 8], strides=[1, 1], ratios=[4, 4], pos_shape=(2, 4, 4))
neck = DeformFPN([4, 6, 8], 6, trans_cfg)
feats = [torch.randn(2, 4, 16, 16), torch.randn(2, 6, 8, 8), torch.randn(2, 8, 4, 4)]
output = neck(feats)
loss = sum(f.pow(2).mean() for f in output["features"])
loss.backward()
print("loss", loss.item())
