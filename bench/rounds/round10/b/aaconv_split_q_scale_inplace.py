# label: hazard raises
# why: the attention-augmented convolution scales q in place (q *= dkh ** -0.5) although q is a reshaped view of one of torch.split's multiple outputs, which autograd forbids.
# source: https://github.com/HansBambel/multidim_conv/issues/2
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AugmentedConv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, dk, dv, Nh, stride=1):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.dk = dk
        self.dv = dv
        self.Nh = Nh
        self.padding = (self.kernel_size - 1) // 2
        self.conv_out = nn.Conv2d(self.in_channels, self.out_channels - self.dv, self.kernel_size,
                                  stride=stride, padding=self.padding)
        self.qkv_conv = nn.Conv2d(self.in_channels, 2 * self.dk + self.dv, kernel_size=self.kernel_size,
                                  stride=stride, padding=self.padding)
        self.attn_out = nn.Conv2d(self.dv, self.dv, kernel_size=1, stride=1)

    def forward(self, x):
        conv_out = self.conv_out(x)
        batch, _, height, width = conv_out.size()
        flat_q, flat_k, flat_v, q, k, v = self.compute_flat_qkv(x, self.dk, self.dv, self.Nh)
        logits = torch.matmul(flat_q.transpose(2, 3), flat_k)
        weights = F.softmax(logits, dim=-1)
        attn_out = torch.matmul(weights, flat_v.transpose(2, 3))
        attn_out = torch.reshape(attn_out, (batch, self.Nh, self.dv // self.Nh, height, width))
        attn_out = self.combine_heads_2d(attn_out)
        attn_out = self.attn_out(attn_out)
        return torch.cat((conv_out, attn_out), dim=1)

    def compute_flat_qkv(self, x, dk, dv, Nh):
        qkv = self.qkv_conv(x)
        N, _, H, W = qkv.size()
        q, k, v = torch.split(qkv, [dk, dk, dv], dim=1)
        q = self.split_heads_2d(q, Nh)
        k = self.split_heads_2d(k, Nh)
        v = self.split_heads_2d(v, Nh)
        dkh = dk // Nh
        q *= dkh ** -0.5  # <-- IPL001: q is a view of one of torch.split's outputs
        flat_q = torch.reshape(q, (N, Nh, dk // Nh, H * W))
        flat_k = torch.reshape(k, (N, Nh, dk // Nh, H * W))
        flat_v = torch.reshape(v, (N, Nh, dv // Nh, H * W))
        return flat_q, flat_k, flat_v, q, k, v

    def split_heads_2d(self, x, Nh):
        batch, channels, height, width = x.size()
        ret_shape = (batch, Nh, channels // Nh, height, width)
        return torch.reshape(x, ret_shape)

    def combine_heads_2d(self, x):
        batch, Nh, dv, H, W = x.size()
        ret_shape = (batch, Nh * dv, H, W)
        return torch.reshape(x, ret_shape)


class MultidimConvNowcaster(nn.Module):
    """Past frames of several weather variables stacked as channels -> next-step prediction."""
    def __init__(self, n_vars=2, n_steps=3, hidden=8):
        super().__init__()
        self.aa1 = AugmentedConv(n_vars * n_steps, hidden, kernel_size=3, dk=4, dv=4, Nh=2)
        self.aa2 = AugmentedConv(hidden, hidden, kernel_size=3, dk=4, dv=4, Nh=2)
        self.head = nn.Conv2d(hidden, n_vars, kernel_size=1)

    def forward(self, x):
        x = F.relu(self.aa1(x))
        x = F.relu(self.aa2(x))
        return self.head(x)


model = MultidimConvNowcaster()
past = torch.randn(2, 6, 5, 5)
future = torch.randn(2, 2, 5, 5)
pred = model(past)
loss = F.mse_loss(pred, future)
loss.backward()
