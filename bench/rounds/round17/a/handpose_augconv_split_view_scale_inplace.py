# label: hazard raises
# why: q comes from torch.split (a multi-output view) reshaped per head, and `q *= dkh ** -0.5` scales it in place, which autograd forbids for outputs of multi-view functions; the model head then also clamps the ReLU output in place with x[x > 1.] = 1.
# source: https://github.com/hanchenchen/Attention-A-Lightweight-2D-Hand-Pose-Estimation-Approach-Pytorch/issues/4
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Mish(nn.Module):
    def forward(self, inputs):
        x = inputs * nn.Tanh()(nn.Softplus()(inputs))
        return x


class AugmentedConv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, dk, dv, Nh, shape=0, relative=False, stride=1):
        super(AugmentedConv, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.dk = int(dk * out_channels)
        self.dv = int(dv * out_channels)
        self.Nh = Nh
        self.shape = shape
        self.relative = relative
        self.stride = stride
        self.padding = (self.kernel_size - 1) // 2
        self.conv_out = nn.Conv2d(self.in_channels, self.out_channels - self.dv, self.kernel_size, stride=stride, padding=self.padding)
        self.qkv_conv = nn.Conv2d(self.in_channels, 2 * self.dk + self.dv, kernel_size=1, stride=1, padding=1 // 2)
        self.attn_out = nn.Conv2d(self.dv, self.dv, kernel_size=1, stride=1)
        if self.relative:
            self.key_rel_w = nn.Parameter(torch.randn((2 * self.shape - 1, self.dk // self.Nh), requires_grad=True))
            self.key_rel_h = nn.Parameter(torch.randn((2 * self.shape - 1, self.dk // self.Nh), requires_grad=True))

    def forward(self, x):
        conv_out = self.conv_out(x)
        batch, _, height, width = conv_out.size()
        flat_q, flat_k, flat_v, q, k, v = self.compute_flat_qkv(x, self.dk, self.dv, self.Nh)
        logits = torch.matmul(flat_q.transpose(2, 3), flat_k)
        if self.relative:
            h_rel_logits, w_rel_logits = self.relative_logits(q)
            logits += h_rel_logits
            logits += w_rel_logits
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
        q *= dkh ** -0.5  # <-- IPL001: in-place scale of a view of torch.split's outputs
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
        return torch.reshape(x, (batch, Nh * dv, H, W))

    def relative_logits(self, q):
        B, Nh, dk, H, W = q.size()
        q = torch.transpose(q, 2, 4).transpose(2, 3)
        rel_logits_w = self.relative_logits_1d(q, self.key_rel_w, H, W, Nh, "w")
        rel_logits_h = self.relative_logits_1d(torch.transpose(q, 2, 3), self.key_rel_h, W, H, Nh, "h")
        return rel_logits_h, rel_logits_w

    def relative_logits_1d(self, q, rel_k, H, W, Nh, case):
        rel_logits = torch.einsum('bhxyd,md->bhxym', q, rel_k)
        rel_logits = torch.reshape(rel_logits, (-1, Nh * H, W, 2 * W - 1))
        rel_logits = self.rel_to_abs(rel_logits)
        rel_logits = torch.reshape(rel_logits, (-1, Nh, H, W, W))
        rel_logits = torch.unsqueeze(rel_logits, dim=3)
        rel_logits = rel_logits.repeat((1, 1, 1, H, 1, 1))
        if case == "w":
            rel_logits = torch.transpose(rel_logits, 3, 4)
        elif case == "h":
            rel_logits = torch.transpose(rel_logits, 2, 4).transpose(4, 5).transpose(3, 5)
        rel_logits = torch.reshape(rel_logits, (-1, Nh, H * W, H * W))
        return rel_logits

    def rel_to_abs(self, x):
        B, Nh, L, _ = x.size()
        col_pad = torch.zeros((B, Nh, L, 1)).to(x)
        x = torch.cat((x, col_pad), dim=3)
        flat_x = torch.reshape(x, (B, Nh, L * 2 * L))
        flat_pad = torch.zeros((B, Nh, L - 1)).to(x)
        flat_x_padded = torch.cat((flat_x, flat_pad), dim=2)
        final_x = torch.reshape(flat_x_padded, (B, Nh, L + 1, 2 * L - 1))
        final_x = final_x[:, :, :L, L - 1:]
        return final_x


def aug_block(in_channels, out_channels, kernel_size, dk, dv, Nh, shape):
    return nn.Sequential(
        AugmentedConv(in_channels=in_channels, out_channels=out_channels, kernel_size=kernel_size, dk=dk,
                      dv=dv, Nh=Nh, relative=True, stride=1, shape=shape),
        nn.BatchNorm2d(out_channels),
        Mish()
    )


class ARB_Add(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, aug=True, dk=0.25, dv=0.25, Nh=2, shape=8):
        super(ARB_Add, self).__init__()
        self.kernel_size = kernel_size
        self.conv1 = nn.Sequential(
            nn.Conv2d(in_channels, out_channels * 4, kernel_size=1),
            nn.BatchNorm2d(out_channels * 4),
            Mish(),
        )
        self.aug = aug
        if self.aug:
            self.attention_aug = aug_block(out_channels * 4, out_channels * 4, kernel_size, dk, dv, Nh, shape)
        self.conv2 = nn.Sequential(
            nn.Conv2d(out_channels * 4, out_channels, kernel_size=1),
            nn.BatchNorm2d(out_channels),
            Mish(),
        )

    def forward(self, inputs):
        x = self.conv1(inputs)
        if self.aug:
            augmented_conv = self.attention_aug(x)
            x = torch.add(augmented_conv, x)
        x = self.conv2(x)
        return x


class Dense(nn.Module):
    def __init__(self, in_channels, growth_rate, kernel_size, iteration, Nh=2, aug=True, shape=8):
        super(Dense, self).__init__()
        self.iteration = iteration
        self.arb = torch.nn.ModuleList([ARB_Add(in_channels, growth_rate, kernel_size=kernel_size, aug=aug, Nh=Nh, shape=shape)])
        for i in range(1, self.iteration):
            self.arb.append(ARB_Add(in_channels + growth_rate * i, growth_rate, kernel_size=kernel_size, aug=aug, Nh=Nh, shape=shape))

    def forward(self, inputs):
        x_list = [inputs]
        for i in range(self.iteration):
            inputs = self.arb[i](inputs)
            x_list.append(inputs)
            inputs = torch.cat(x_list, dim=1)
        return inputs


class light_Model(nn.Module):
    def __init__(self):
        super(light_Model, self).__init__()
        self.dense1 = Dense(in_channels=3, growth_rate=4, kernel_size=3, iteration=2, Nh=2, aug=True, shape=8)
        self.avg_pool = nn.AvgPool2d(kernel_size=2, stride=2)
        self.conv = nn.Conv2d(in_channels=11, out_channels=42, kernel_size=1)
        self.relu = nn.ReLU()

    def forward(self, inputs):
        x = self.dense1(inputs)
        x = self.avg_pool(x)
        x = F.adaptive_avg_pool2d(x, 1)
        x = self.conv(x)
        x = self.relu(x)
        x[x > 1.] = 1.  # <-- IPL001: clamps the ReLU output that ReluBackward saved
        x = torch.reshape(x, (-1, 21, 2))
        return x


model = light_Model()
images = torch.rand(2, 3, 8, 8)
keypoints = torch.rand(2, 21, 2)
pred = model(images)
loss = F.mse_loss(pred, keypoints)
loss.backward()
