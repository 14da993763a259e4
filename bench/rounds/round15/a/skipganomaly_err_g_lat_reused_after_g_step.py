# label: hazard raises no-twin
# why: backward_g retains a graph through netg and netd and optimizer_g.step() then updates netg's weights in place, but backward_d adds the stored self.err_g_lat (which still depends on netg) into err_d, so err_d.backward() needs the overwritten generator weights and fails.
# source: https://github.com/samet-akcay/skip-ganomaly/issues/16 (lib/models/skipganomaly.py at commit 4f93ee64186e4461b43d4269620f229dcb9c8003)
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


def l2_loss(input, target, size_average=True):
    if size_average:
        return torch.mean(torch.pow((input - target), 2))
    return torch.pow((input - target), 2)


class UnetGenerator(nn.Module):
    def __init__(self, nc=3, ngf=4):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(nc, ngf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, True),
                                  nn.Conv2d(ngf, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2))
        self.up = nn.Sequential(nn.ReLU(True), nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
                                nn.BatchNorm2d(ngf), nn.ReLU(True), nn.ConvTranspose2d(ngf, nc, 4, 2, 1), nn.Tanh())

    def forward(self, x):
        return self.up(self.down(x))


class NetD(nn.Module):
    def __init__(self, nc=3, ndf=4):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, True),
                                      nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2),
                                      nn.LeakyReLU(0.2, True))
        self.classifier = nn.Sequential(nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False), nn.Sigmoid())

    def forward(self, x):
        features = self.features(x)
        classifier = self.classifier(features).view(-1, 1).squeeze(1)
        return classifier, features


class Skipganomaly:
    def __init__(self, batchsize=2, isize=16, w_adv=1, w_con=50, w_lat=1, lr=0.0002, beta1=0.5):
        self.w_adv, self.w_con, self.w_lat = w_adv, w_con, w_lat
        self.netg = UnetGenerator()
        self.netd = NetD()
        self.l_adv = nn.BCELoss()
        self.l_con = nn.L1Loss()
        self.l_lat = l2_loss
        self.input = torch.randn(batchsize, 3, isize, isize)
        self.noise = torch.randn(batchsize, 3, isize, isize) * 0.1
        self.real_label = torch.ones(size=(batchsize,), dtype=torch.float32)
        self.fake_label = torch.zeros(size=(batchsize,), dtype=torch.float32)
        self.optimizer_d = optim.Adam(self.netd.parameters(), lr=lr, betas=(beta1, 0.999))
        self.optimizer_g = optim.Adam(self.netg.parameters(), lr=lr, betas=(beta1, 0.999))

    def forward(self):
        self.forward_g()
        self.forward_d()

    def forward_g(self):
        self.fake = self.netg(self.input + self.noise)

    def forward_d(self):
        self.pred_real, self.feat_real = self.netd(self.input)
        self.pred_fake, self.feat_fake = self.netd(self.fake)

    def backward_g(self):
        self.err_g_adv = self.w_adv * self.l_adv(self.pred_fake, self.real_label)
        self.err_g_con = self.w_con * self.l_con(self.fake, self.input)
        self.err_g_lat = self.w_lat * self.l_lat(self.feat_fake, self.feat_real)
        self.err_g = self.err_g_adv + self.err_g_con + self.err_g_lat
        self.err_g.backward(retain_graph=True)

    def backward_d(self):
        # Fake
        pred_fake, _ = self.netd(self.fake.detach())
        self.err_d_fake = self.l_adv(pred_fake, self.fake_label)
        # Real
        self.err_d_real = self.l_adv(self.pred_real, self.real_label)
        # Combine losses.
        self.err_d = self.err_d_real + self.err_d_fake + self.err_g_lat
        self.err_d.backward(retain_graph=True)

    def update_netg(self):
        self.optimizer_g.zero_grad()
        self.backward_g()
        self.optimizer_g.step()  # <-- IPL001: updates netg weights saved by the retained graph that err_d.backward() still traverses via err_g_lat

    def update_netd(self):
        self.optimizer_d.zero_grad()
        self.backward_d()
        self.optimizer_d.step()

    def optimize_params(self):
        self.forward()
        self.update_netg()
        self.update_netd()


model = Skipganomaly()
model.optimize_params()
netg = model.netg
netd = model.netd
err_d = model.err_d.detach()
