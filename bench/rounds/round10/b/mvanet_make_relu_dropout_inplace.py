# label: hazard raises no-twin
# why: a helper flips every nn.ReLU/nn.Dropout to inplace=True after construction, and the transformer block's ReLU output (saved by ReluBackward for dropout's mask product) is then overwritten by the in-place dropout.
# source: https://github.com/qianyu-dlut/MVANet/issues/2
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def get_activation_fn(activation):
    if activation == "relu":
        return nn.ReLU()
    if activation == "gelu":
        return nn.GELU()
    raise RuntimeError(activation)


class MCLM(nn.Module):
    def __init__(self, d_model=8, dim_feedforward=16, dropout=0.1):
        super().__init__()
        self.attention = nn.MultiheadAttention(d_model, 2, dropout=dropout)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.dropout = nn.Dropout(dropout)
        self.dropout1 = nn.Dropout(dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.activation = get_activation_fn("relu")

    def forward(self, l, g):
        g_hw_b_c = g.flatten(2).permute(2, 0, 1)
        l_hw_b_c = l.flatten(2).permute(2, 0, 1)
        attn = self.attention(l_hw_b_c, g_hw_b_c, g_hw_b_c)[0]
        l_hw_b_c = self.norm1(l_hw_b_c + self.dropout1(attn))
        ff = self.linear2(self.dropout(self.activation(self.linear1(l_hw_b_c))))
        l_hw_b_c = l_hw_b_c + ff
        return l_hw_b_c.permute(1, 2, 0).reshape(l.shape)


class MVANet(nn.Module):
    def __init__(self):
        super().__init__()
        self.shallow = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.mclm = MCLM()
        self.head = nn.Conv2d(8, 1, 1)
        for m in self.modules():
            if isinstance(m, nn.ReLU) or isinstance(m, nn.Dropout):
                m.inplace = True  # <-- IPL001: the Dropout after the transformer ReLU now overwrites a tensor ReluBackward saved

    def forward(self, x):
        feat = self.shallow(x)
        glob = F.adaptive_avg_pool2d(feat, 2)
        feat = self.mclm(feat, glob)
        return self.head(feat)


net = MVANet()
net.train()
images = torch.randn(2, 3, 4, 4)
gts = (torch.rand(2, 1, 4, 4) > 0.5).float()
pred = net(images)
loss = F.binary_cross_entropy_with_logits(pred, gts)
loss.backward()
