# label: hazard raises no-twin
# why: after construction the model flips every nn.ReLU and nn.Dropout to inplace=True; in the attention block's feed-forward the in-place dropout then overwrites the output of F.relu that relu's backward needs
# source: https://github.com/qianyu-dlut/MVANet/issues/2
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def get_activation_fn(activation):
    """Return an activation function given a string"""
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(F"activation should be relu/gelu, not {activation}.")


class MCLM(nn.Module):
    """multi-view complementary localization: global token attends to local patch tokens"""

    def __init__(self, d_model, num_heads, pool_ratios=(1, 2)):
        super(MCLM, self).__init__()
        self.attention = nn.ModuleList([nn.MultiheadAttention(d_model, num_heads, dropout=0.1) for _ in range(2)])
        self.linear1 = nn.Linear(d_model, d_model * 2)
        self.linear2 = nn.Linear(d_model * 2, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(0.1)
        self.dropout1 = nn.Dropout(0.1)
        self.dropout2 = nn.Dropout(0.1)
        self.activation = get_activation_fn('relu')
        self.pool_ratios = pool_ratios

    def forward(self, l, g):
        # l: (HW, B, C) local tokens, g: (hw, B, C) global tokens
        pools = []
        for pool_ratio in self.pool_ratios:
            hw = int(l.shape[0] ** 0.5)
            l_img = l.permute(1, 2, 0).reshape(l.shape[1], l.shape[2], hw, hw)
            pool = F.adaptive_avg_pool2d(l_img, (hw // pool_ratio, hw // pool_ratio))
            pools.append(pool.flatten(2).permute(2, 0, 1))
        pools = torch.cat(pools, 0)
        g_hat = self.attention[0](g, pools, pools)[0]
        g_hat = g + self.dropout1(g_hat)
        g_hat = self.norm1(g_hat)
        g_hat2 = self.linear2(self.dropout(self.activation(self.linear1(g_hat))))
        g_hat = g_hat + self.dropout2(g_hat2)
        g_hat = self.norm2(g_hat)
        return g_hat


class MVANetLite(nn.Module):
    def __init__(self, emb_dim=16):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, emb_dim, 3, padding=1), nn.BatchNorm2d(emb_dim), nn.ReLU())
        self.mclm = MCLM(emb_dim, 2)
        self.head = nn.Sequential(nn.Conv2d(emb_dim, emb_dim, 3, padding=1), nn.BatchNorm2d(emb_dim), nn.ReLU(),
                                  nn.Conv2d(emb_dim, 1, 1))
        for m in self.modules():
            if isinstance(m, nn.ReLU) or isinstance(m, nn.Dropout):
                m.inplace = True  # <-- IPL001: makes the MCLM feed-forward dropout overwrite the relu output saved for backward

    def forward(self, x):
        feat = self.backbone(x)                                 # (B, C, H, W)
        glb = F.interpolate(feat, scale_factor=0.5, mode='bilinear', align_corners=False)
        l = feat.flatten(2).permute(2, 0, 1)
        g = glb.flatten(2).permute(2, 0, 1)
        g = self.mclm(l, g)
        b, c, h, w = glb.shape
        glb = g.permute(1, 2, 0).reshape(b, c, h, w)
        fused = feat + F.interpolate(glb, size=feat.shape[2:], mode='bilinear', align_corners=False)
        return self.head(fused)


model = MVANetLite()
image = torch.randn(2, 3, 8, 8)
gt = (torch.rand(2, 1, 8, 8) > 0.5).float()
pred = model(image)
loss = F.binary_cross_entropy_with_logits(pred, gt)
loss.backward()
