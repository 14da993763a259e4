# label: hazard raises
# why: Linear_ResBlock applies its shared nn.ReLU(inplace=True) to its own input, which in training is feat_x from feat.chunk(2); the in-place write hits a multi-output view, and conv_res(feature) and the caller's later use of feat_x would otherwise read the clobbered values.
# source: https://github.com/paul007pl/VRCNet/issues/33 (models/vrcnet.py @ 55527a0efcf1c1bc31c515a9d012bc62330e51b0)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PCN_encoder(nn.Module):
    def __init__(self, output_size=16):
        super().__init__()
        self.conv1 = nn.Conv1d(3, 8, 1)
        self.conv2 = nn.Conv1d(8, output_size, 1)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = self.conv2(x)
        return torch.max(x, dim=2)[0]


class Linear_ResBlock(nn.Module):
    def __init__(self, input_size=1024, output_size=256):
        super(Linear_ResBlock, self).__init__()
        self.conv1 = nn.Linear(input_size, input_size)
        self.conv2 = nn.Linear(input_size, output_size)
        self.conv_res = nn.Linear(input_size, output_size)

        self.af = nn.ReLU(inplace=True)  # <-- IPL002, IPL004: in-place ReLU on the block input, which conv_res and the caller read again

    def forward(self, feature):
        return self.conv2(self.af(self.conv1(self.af(feature)))) + self.conv_res(feature)


class Decoder(nn.Module):
    def __init__(self, global_feature_size=16, num_coarse=8):
        super().__init__()
        self.num_coarse = num_coarse
        self.fc = nn.Linear(global_feature_size, num_coarse * 3)

    def forward(self, feat, x):
        return self.fc(feat).view(feat.size(0), 3, self.num_coarse)


def calc_cd(output, gt):
    dist = torch.cdist(output, gt) ** 2
    return dist.min(2)[0].mean(1) + dist.min(1)[0].mean(1)


class Model(nn.Module):
    def __init__(self, size_z=4, global_feature_size=16):
        super(Model, self).__init__()
        self.size_z = size_z
        self.encoder = PCN_encoder(output_size=global_feature_size)
        self.posterior_infer1 = Linear_ResBlock(input_size=global_feature_size, output_size=global_feature_size)
        self.posterior_infer2 = Linear_ResBlock(input_size=global_feature_size, output_size=size_z * 2)
        self.prior_infer = Linear_ResBlock(input_size=global_feature_size, output_size=size_z * 2)
        self.generator = Linear_ResBlock(input_size=size_z, output_size=global_feature_size)
        self.decoder = Decoder(global_feature_size)

    def forward(self, x, gt, y, is_training=True, alpha=0.5):
        if is_training:
            gt = torch.cat([gt, gt], dim=0)
            points = torch.cat([x, y], dim=0)
            x = torch.cat([x, x], dim=0)
        else:
            points = x
        feat = self.encoder(points)

        feat_x, feat_y = feat.chunk(2)
        o_x = self.posterior_infer2(self.posterior_infer1(feat_x))
        q_mu, q_std = torch.split(o_x, self.size_z, dim=1)
        o_y = self.prior_infer(feat_y)
        p_mu, p_std = torch.split(o_y, self.size_z, dim=1)
        q_std = F.softplus(q_std)
        p_std = F.softplus(p_std)
        q_distribution = torch.distributions.Normal(q_mu, q_std)
        p_distribution = torch.distributions.Normal(p_mu, p_std)
        p_distribution_fix = torch.distributions.Normal(p_mu.detach(), p_std.detach())
        m_distribution = torch.distributions.Normal(torch.zeros_like(p_mu), torch.ones_like(p_std))
        z_q = q_distribution.rsample()
        z_p = p_distribution.rsample()
        z = torch.cat([z_q, z_p], dim=0)
        feat = torch.cat([feat_x, feat_x], dim=0)

        feat += self.generator(z)

        coarse = self.decoder(feat, x).transpose(1, 2).contiguous()
        dl_rec = torch.distributions.kl_divergence(m_distribution, p_distribution)
        dl_g = torch.distributions.kl_divergence(p_distribution_fix, q_distribution)
        loss3 = calc_cd(coarse, gt)
        total_train_loss = loss3.mean() * alpha
        total_train_loss += (dl_rec.mean() + dl_g.mean()) * 20
        return coarse, loss3, total_train_loss


net = Model()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
inputs = torch.rand(2, 3, 10)
partial_gt = torch.rand(2, 3, 10)
gt = torch.rand(2, 12, 3)
optimizer.zero_grad()
out2, loss2, net_loss = net(inputs, gt, partial_gt, alpha=0.5)
net_loss.backward()
optimizer.step()
