# label: hazard raises no-twin
# why: LossWithGAN_STE computes D_fake, steps its own D_optimizer (updating the discriminator convs in place) and then adds 0.1 * D_fake to the generator loss, so G_loss.backward() reaches conv weights saved before the step.
# source: https://github.com/lcy0604/EraseNet/issues/5
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvWithActivation(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, activation=nn.LeakyReLU(0.2, inplace=True)):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding)
        self.activation = activation

    def forward(self, input):
        x = self.conv2d(input)
        if self.activation is not None:
            return self.activation(x)
        return x


class Discriminator_STE(nn.Module):
    def __init__(self, inputChannels):
        super(Discriminator_STE, self).__init__()
        cnum = 4
        self.globalDis = nn.Sequential(
            ConvWithActivation(3, 2 * cnum, 4, 2, padding=1),
            ConvWithActivation(2 * cnum, 4 * cnum, 4, 2, padding=1),
        )
        self.localDis = nn.Sequential(
            ConvWithActivation(3, 2 * cnum, 4, 2, padding=1),
            ConvWithActivation(2 * cnum, 4 * cnum, 4, 2, padding=1),
        )
        self.fusion = nn.Sequential(nn.Conv2d(8 * cnum, 1, kernel_size=2), nn.Sigmoid())

    def forward(self, input, masks):
        global_feat = self.globalDis(input)
        local_feat = self.localDis(input * (1 - masks))
        concat_feat = torch.cat((global_feat, local_feat), 1)
        return self.fusion(concat_feat).view(input.size()[0], -1)


class VGG16FeatureExtractor(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc_1 = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(inplace=True))
        self.enc_2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(inplace=True))
        self.enc_3 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(inplace=True))
        for p in self.parameters():
            p.requires_grad = False

    def forward(self, image):
        results = [image]
        for i in range(3):
            func = getattr(self, 'enc_{:d}'.format(i + 1))
            results.append(func(results[-1]))
        return results[1:]


def gram_matrix(feat):
    (b, ch, h, w) = feat.size()
    feat = feat.view(b, ch, h * w)
    feat_t = feat.transpose(1, 2)
    return torch.bmm(feat, feat_t) / (ch * h * w)


def dice_loss(input, target):
    input = torch.sigmoid(input)
    input = input.contiguous().view(input.size()[0], -1)
    target = target.contiguous().view(target.size()[0], -1)
    a = torch.sum(input * target, 1)
    b = torch.sum(input * input, 1) + 0.001
    c = torch.sum(target * target, 1) + 0.001
    d = (2 * a) / (b + c)
    return 1 - torch.mean(d)


class LossWithGAN_STE(nn.Module):
    def __init__(self, extractor, Lamda, lr, betasInit=(0.5, 0.9)):
        super(LossWithGAN_STE, self).__init__()
        self.l1 = nn.L1Loss()
        self.extractor = extractor
        self.discriminator = Discriminator_STE(3)
        self.D_optimizer = torch.optim.Adam(self.discriminator.parameters(), lr=lr, betas=betasInit)
        self.lamda = Lamda

    def forward(self, input, mask, x_o1, x_o2, x_o3, output, mm, gt, count, epoch):
        self.discriminator.zero_grad()
        D_real = self.discriminator(gt, mask)
        D_real = D_real.mean().sum() * -1
        D_fake = self.discriminator(output, mask)
        D_fake = D_fake.mean().sum() * 1
        D_loss = torch.mean(F.relu(1. + D_real)) + torch.mean(F.relu(1. + D_fake))
        D_fake = -torch.mean(D_fake)

        self.D_optimizer.zero_grad()
        D_loss.backward(retain_graph=True)
        self.D_optimizer.step()  # <-- IPL001: updates D weights saved by the D_fake graph that GLoss still uses

        output_comp = mask * input + (1 - mask) * output
        holeLoss = 10 * self.l1((1 - mask) * output, (1 - mask) * gt)
        validAreaLoss = 2 * self.l1(mask * output, mask * gt)
        mask_loss = dice_loss(mm, 1 - mask)
        masks_a = F.interpolate(mask, scale_factor=0.25)
        masks_b = F.interpolate(mask, scale_factor=0.5)
        imgs1 = F.interpolate(gt, scale_factor=0.25)
        imgs2 = F.interpolate(gt, scale_factor=0.5)
        msrloss = 8 * self.l1((1 - mask) * x_o3, (1 - mask) * gt) + 0.8 * self.l1(mask * x_o3, mask * gt) + \
            6 * self.l1((1 - masks_b) * x_o2, (1 - masks_b) * imgs2) + 1 * self.l1(masks_b * x_o2, masks_b * imgs2) + \
            5 * self.l1((1 - masks_a) * x_o1, (1 - masks_a) * imgs1) + 0.8 * self.l1(masks_a * x_o1, masks_a * imgs1)

        feat_output_comp = self.extractor(output_comp)
        feat_output = self.extractor(output)
        feat_gt = self.extractor(gt)

        prcLoss = 0.0
        for i in range(3):
            prcLoss += 0.01 * self.l1(feat_output[i], feat_gt[i])
            prcLoss += 0.01 * self.l1(feat_output_comp[i], feat_gt[i])

        styleLoss = 0.0
        for i in range(3):
            styleLoss += 120 * self.l1(gram_matrix(feat_output[i]), gram_matrix(feat_gt[i]))
            styleLoss += 120 * self.l1(gram_matrix(feat_output_comp[i]), gram_matrix(feat_gt[i]))

        GLoss = msrloss + holeLoss + validAreaLoss + prcLoss + styleLoss + 0.1 * D_fake + 1 * mask_loss
        return GLoss.sum()


class STRnet2(nn.Module):
    def __init__(self, n_in_channel=3):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.LeakyReLU(0.2))
        self.out1 = nn.Conv2d(8, 3, 1)
        self.out2 = nn.Conv2d(8, 3, 1)
        self.out3 = nn.Conv2d(8, 3, 1)
        self.mask_head = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        f = self.enc(x)
        x_o3 = self.out3(f)
        x_o2 = F.interpolate(self.out2(f), scale_factor=0.5)
        x_o1 = F.interpolate(self.out1(f), scale_factor=0.25)
        mm = self.mask_head(f)
        output = torch.tanh(x_o3)
        return x_o1, x_o2, x_o3, output, mm


netG = STRnet2(3)
G_optimizer = torch.optim.Adam(netG.parameters(), lr=0.0001, betas=(0.5, 0.9))
criterion = LossWithGAN_STE(VGG16FeatureExtractor(), lr=0.00001, betasInit=(0.0, 0.9), Lamda=10.0)

imgs = torch.rand(2, 3, 8, 8)
gt = torch.rand(2, 3, 8, 8)
masks = (torch.rand(2, 1, 8, 8) > 0.5).float()

netG.zero_grad()
x_o1, x_o2, x_o3, fake_images, mm = netG(imgs)
G_loss = criterion(imgs, masks, x_o1, x_o2, x_o3, fake_images, mm, gt, 0, 0)
G_loss = G_loss.sum()
G_optimizer.zero_grad()
G_loss.backward()
G_optimizer.step()
