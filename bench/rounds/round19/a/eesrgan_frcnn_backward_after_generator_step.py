# label: hazard raises no-twin
# why: optimizer_G.step() updates the generator weights in place after l_g_total.backward(retain_graph=True), but the detector loss is later backpropagated through final_SR, whose retained generator graph saved the old weights.
# source: https://github.com/Jakaria08/EESRGAN/issues/9
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ESRGAN_EESN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rrdb = nn.Sequential(nn.Conv2d(3, 4, 3, 1, 1), nn.LeakyReLU(0.2), nn.Conv2d(4, 3, 3, 1, 1))
        self.eesn = nn.Conv2d(3, 3, 3, 1, 1)

    def forward(self, x):
        fake_H = self.rrdb(F.interpolate(x, scale_factor=2, mode='nearest'))
        x_learned_lap = self.eesn(fake_H)
        final_SR = fake_H + x_learned_lap
        return fake_H, final_SR, x_learned_lap, None


class Discriminator_VGG(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3, 2, 1), nn.LeakyReLU(0.2))
        self.classifier = nn.Linear(4 * 4 * 4, 1)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


class TinyFRCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Conv2d(3, 4, 3, 2, 1)
        self.box_head = nn.Linear(4, 4)
        self.cls_head = nn.Linear(4, 2)

    def forward(self, images, targets):
        loss_dict = {'loss_box_reg': 0.0, 'loss_classifier': 0.0}
        for img, t in zip(images, targets):
            feat = self.backbone(img[None]).mean(dim=(2, 3))
            loss_dict['loss_box_reg'] = loss_dict['loss_box_reg'] + F.smooth_l1_loss(self.box_head(feat), t['boxes'])
            loss_dict['loss_classifier'] = loss_dict['loss_classifier'] + F.cross_entropy(self.cls_head(feat), t['labels'])
        return loss_dict


class ESRGAN_EESN_FRCNN_Model:
    def __init__(self):
        self.netG = ESRGAN_EESN()
        self.netD = Discriminator_VGG()
        self.netFRCNN = TinyFRCNN()
        self.cri_pix = nn.L1Loss()
        self.cri_gan = nn.BCEWithLogitsLoss()
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=1e-4)
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=1e-4)
        self.optimizer_FRCNN = torch.optim.SGD(self.netFRCNN.parameters(), lr=1e-3)

    def feed_data(self, image, targets):
        self.var_L = image['image_lq']
        self.var_H = image['image']
        self.var_ref = image['image']
        self.targets = targets

    def optimize_parameters(self, step):
        # Generator
        for p in self.netD.parameters():
            p.requires_grad = False
        self.optimizer_G.zero_grad()
        self.fake_H, self.final_SR, self.x_learned_lap_fake, _ = self.netG(self.var_L)

        l_g_total = 0
        l_g_pix = self.cri_pix(self.fake_H, self.var_H)
        l_g_total += l_g_pix
        pred_g_fake = self.netD(self.fake_H)
        l_g_gan = 5e-3 * self.cri_gan(pred_g_fake, torch.ones_like(pred_g_fake))
        l_g_total += l_g_gan
        l_g_total.backward(retain_graph=True)
        self.optimizer_G.step()  # <-- IPL001: generator weights change in place while final_SR's retained graph still needs them

        # Discriminator
        for p in self.netD.parameters():
            p.requires_grad = True
        self.optimizer_D.zero_grad()
        pred_d_real = self.netD(self.var_ref)
        pred_d_fake = self.netD(self.fake_H.detach())
        l_d_total = self.cri_gan(pred_d_real, torch.ones_like(pred_d_real)) + \
            self.cri_gan(pred_d_fake, torch.zeros_like(pred_d_fake))
        l_d_total.backward()
        self.optimizer_D.step()

        for p in self.netD.parameters():
            p.requires_grad = False
        # Run FRCNN on the super-resolved images
        self.optimizer_FRCNN.zero_grad()
        self.intermediate_img = self.final_SR
        img_count = self.intermediate_img.size()[0]
        self.intermediate_img = [self.intermediate_img[i] for i in range(img_count)]
        loss_dict = self.netFRCNN(self.intermediate_img, self.targets)
        losses = sum(loss for loss in loss_dict.values())
        losses.backward()
        self.optimizer_FRCNN.step()
        return losses.detach()


model = ESRGAN_EESN_FRCNN_Model()
image = {'image_lq': torch.rand(2, 3, 4, 4), 'image': torch.rand(2, 3, 8, 8)}
targets = [{'boxes': torch.rand(1, 4), 'labels': torch.tensor([1])}, {'boxes': torch.rand(1, 4), 'labels': torch.tensor([0])}]
model.feed_data(image, targets)
loss = model.optimize_parameters(step=1)
