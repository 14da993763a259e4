# label: hazard raises no-twin
# why: the discriminator scores [y, pred] in one forward, d_loss.backward(retain_graph=True) is followed by optD.step(), and then g_loss reuses pred_neg from that same forward, so backward needs the discriminator weights that the optimizer just overwrote in place
# source: https://github.com/reach2sbera/ldct_nonlocal/issues/3
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def create_mask(neighborhood_size, SIZE):
    mask = torch.zeros([SIZE, SIZE], dtype=torch.bool)
    for j in range(0, SIZE):
        for i in range(0, int(neighborhood_size * np.sqrt(SIZE)), int(np.sqrt(SIZE))):
            for k in range(neighborhood_size):
                mask[j, i + k] = 1
    return mask


class NonLocal(nn.Module):
    def __init__(self, in_dim, activation, SIZE):
        super(NonLocal, self).__init__()
        self.chanel_in = in_dim
        self.activation = activation
        self.query_conv = nn.Conv2d(in_channels=in_dim, out_channels=in_dim // 8, kernel_size=1)
        self.key_conv = nn.Conv2d(in_channels=in_dim, out_channels=in_dim // 8, kernel_size=1)
        self.value_conv = nn.Sequential(nn.Conv2d(in_channels=in_dim, out_channels=in_dim, kernel_size=3, padding=1),
                                        nn.ReLU(inplace=True),
                                        nn.Conv2d(in_channels=in_dim, out_channels=in_dim, kernel_size=3, padding=1))
        self.softmax = nn.Softmax(dim=-1)
        self.SIZE = int(SIZE)
        self.neighborhood_size = 3
        self.mask = create_mask(self.neighborhood_size, self.SIZE)

    def forward(self, x):
        m_batchsize, C, width, height = x.size()
        proj_query = self.query_conv(x).view(m_batchsize, -1, width * height).permute(0, 2, 1)
        proj_key = self.key_conv(x).view(m_batchsize, -1, width * height)
        energy = torch.bmm(proj_query, proj_key)
        mask = self.mask.repeat(m_batchsize, 1, 1)
        energy[~mask] = 0
        attention = self.softmax(energy)
        proj_value = self.value_conv(x).view(m_batchsize, -1, width * height)
        out = torch.bmm(proj_value, attention.permute(0, 2, 1))
        out = out.view(m_batchsize, C, width, height)
        return torch.cat((out, x), dim=1)


class UNet(nn.Module):
    def __init__(self, image_size):
        super(UNet, self).__init__()
        self.inter_channel = 8
        self.conv1 = nn.Sequential(nn.Conv2d(1, self.inter_channel, 5, padding=2), nn.ReLU(inplace=True))
        self.layer1 = nn.Sequential(nn.Conv2d(self.inter_channel, self.inter_channel, 5, padding=2), nn.ReLU(inplace=True))
        self.pool1 = nn.MaxPool2d(kernel_size=(2, 2))
        self.layer2 = nn.Sequential(nn.Conv2d(self.inter_channel, self.inter_channel, 5, padding=2), nn.ReLU(inplace=True))
        self.pool2 = nn.MaxPool2d(kernel_size=(2, 2))
        self.layer3 = nn.Sequential(NonLocal(self.inter_channel, 'relu', (image_size / 4) * (image_size / 4)),
                                    nn.Conv2d(2 * self.inter_channel, self.inter_channel, 5, padding=2),
                                    nn.ReLU(inplace=True))
        self.pool3 = nn.Upsample(scale_factor=2, mode='nearest')
        self.layer4 = nn.Sequential(nn.Conv2d(2 * self.inter_channel, self.inter_channel, 5, padding=2), nn.ReLU(inplace=True))
        self.pool4 = nn.Upsample(scale_factor=2, mode='nearest')
        self.layer5 = nn.Sequential(nn.Conv2d(2 * self.inter_channel, self.inter_channel, 5, padding=2), nn.ReLU(inplace=True))
        self.conv2 = nn.Conv2d(self.inter_channel, 1, 3, padding=1)

    def forward(self, x):
        x = self.conv1(x)
        x1 = self.layer1(x)
        x = self.pool1(x1)
        x2 = self.layer2(x)
        x = self.pool2(x2)
        x = self.layer3(x)
        x = self.pool3(x)
        x = self.layer4(torch.cat((x2, x), 1))
        x = self.pool4(x)
        x = self.layer5(torch.cat((x1, x), 1))
        x = self.conv2(x)
        return x


class SNConvWithActivation(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 activation=torch.nn.LeakyReLU(0.2, inplace=True)):
        super(SNConvWithActivation, self).__init__()
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias)
        self.conv2d = torch.nn.utils.spectral_norm(self.conv2d)
        self.activation = activation

    def forward(self, input):
        x = self.conv2d(input)
        if self.activation is not None:
            return self.activation(x)
        else:
            return x


class Self_Attn(nn.Module):
    def __init__(self, in_dim):
        super(Self_Attn, self).__init__()
        self.query_conv = nn.Conv2d(in_channels=in_dim, out_channels=in_dim // 8, kernel_size=1)
        self.key_conv = nn.Conv2d(in_channels=in_dim, out_channels=in_dim // 8, kernel_size=1)
        self.value_conv = nn.Conv2d(in_channels=in_dim, out_channels=in_dim, kernel_size=1)
        self.gamma = nn.Parameter(torch.zeros(1))
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x):
        m_batchsize, C, width, height = x.size()
        proj_query = self.query_conv(x).view(m_batchsize, -1, width * height).permute(0, 2, 1)
        proj_key = self.key_conv(x).view(m_batchsize, -1, width * height)
        energy = torch.bmm(proj_query, proj_key)
        attention = self.softmax(energy)
        proj_value = self.value_conv(x).view(m_batchsize, -1, width * height)
        out = torch.bmm(proj_value, attention.permute(0, 2, 1))
        out = out.view(m_batchsize, C, width, height)
        out = self.gamma * out + x
        return out


class ImageDiscriminator(nn.Module):
    def __init__(self):
        super(ImageDiscriminator, self).__init__()
        cnum = 4
        self.discriminator_net = nn.Sequential(
            SNConvWithActivation(1, cnum, 3, 1),
            SNConvWithActivation(cnum, 2 * cnum, 3, 2),
            SNConvWithActivation(2 * cnum, 8 * cnum, 3, 1),
            Self_Attn(8 * cnum),
            SNConvWithActivation(8 * cnum, 8 * cnum, 3, padding=2)
        )

    def forward(self, input):
        x = self.discriminator_net(input)
        x = x.view((x.size(0), -1))
        return x


class STD(torch.nn.Module):
    def __init__(self, window_size=5):
        super(STD, self).__init__()
        self.window_size = window_size
        self.channel = 1
        self.softmax = torch.nn.LogSoftmax(dim=1)
        g = torch.exp(-(torch.arange(window_size) - window_size // 2).float() ** 2 / (2 * 3.5 ** 2))
        g = (g / g.sum()).unsqueeze(1)
        self.window = g.mm(g.t()).unsqueeze(0).unsqueeze(0)

    def forward(self, img):
        mu = F.conv2d(img, self.window, padding=self.window_size // 2, groups=self.channel)
        mu_sq = mu.pow(2)
        sigma_sq = F.conv2d(img * img, self.window, padding=self.window_size // 2, groups=self.channel) - mu_sq
        B, C, W, H = sigma_sq.shape
        sigma_sq = torch.flatten(sigma_sq, start_dim=1)
        noise_map = self.softmax(sigma_sq)
        return torch.reshape(noise_map, [B, C, W, H])


class NCMSE(nn.Module):
    def __init__(self):
        super(NCMSE, self).__init__()
        self.std = STD()

    def forward(self, out_image, gt_image, org_image):
        return torch.mean(torch.mul(self.std(org_image - gt_image), torch.pow(out_image - gt_image, 2)))


class SNDisLoss(torch.nn.Module):
    def forward(self, pos, neg):
        return -torch.mean(pos) + torch.mean(neg)


class SNGenLoss(torch.nn.Module):
    def __init__(self, weight=1):
        super(SNGenLoss, self).__init__()
        self.weight = weight

    def forward(self, neg):
        return - self.weight * torch.mean(neg)


netG = UNet(16)
netD = ImageDiscriminator()
optG = torch.optim.Adam(netG.parameters(), lr=1e-4)
optD = torch.optim.Adam(netD.parameters(), lr=4e-4)
criterion = NCMSE()
GANLoss = SNGenLoss()
DLoss = SNDisLoss()

data_loader = [(torch.rand(16, 16), torch.rand(16, 16))]
for iter_, (x, y) in enumerate(data_loader):
    x = x.unsqueeze(0).unsqueeze(0).float()
    y = y.unsqueeze(0).unsqueeze(0).float()
    pred = netG(x)

    optD.zero_grad()
    netD.zero_grad()
    pos_neg_imgs = torch.cat([y, pred], dim=0)
    pred_pos_neg = netD(pos_neg_imgs)
    pred_pos, pred_neg = torch.chunk(pred_pos_neg, 2, dim=0)
    d_loss = DLoss(pred_pos, pred_neg)
    d_loss.backward(retain_graph=True)
    optD.step()  # <-- IPL001: updates the discriminator weights that pred_neg's graph still needs for the generator loss

    optG.zero_grad()
    netG.zero_grad()
    g_loss = GANLoss(pred_neg)
    rloss = criterion(pred, y, x)
    loss = g_loss + 0.1 * rloss
    loss.backward()
    optG.step()
