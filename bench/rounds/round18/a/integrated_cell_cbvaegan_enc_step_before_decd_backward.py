# label: hazard raises no-twin
# why: iteration() calls opt_enc.step() right after beta_vae_loss.backward(retain_graph=True), then backpropagates minimaxDecDLoss through xHat = dec(z = reparameterize(enc(x))), whose graph still holds the encoder weights that the step just updated in place.
# source: https://github.com/AllenCellModeling/pytorch_integrated_cell/issues/95 (integrated_cell/models/cbvaegan_target2.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


class Enc(nn.Module):
    def __init__(self, n_classes=3, n_latent=4):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(2, 4, 3, 2, 1), nn.ReLU(), nn.Flatten())
        self.mu = nn.Linear(4 * 4 * 4 + n_classes, n_latent)
        self.logsigma = nn.Linear(4 * 4 * 4 + n_classes, n_latent)

    def forward(self, x, ref, classes_onehot):
        h = torch.cat([self.conv(torch.cat([x, ref], 1)), classes_onehot], 1)
        return self.mu(h), self.logsigma(h)


class Dec(nn.Module):
    def __init__(self, n_classes=3, n_latent=4):
        super().__init__()
        self.fc = nn.Linear(n_latent + n_classes, 8 * 8)
        self.conv = nn.Conv2d(2, 1, 3, padding=1)

    def forward(self, z, ref, classes_onehot):
        h = self.fc(torch.cat([z, classes_onehot], 1)).view(-1, 1, 8, 8)
        return torch.sigmoid(self.conv(torch.cat([h, ref], 1)))


class DecD(nn.Module):
    def __init__(self, n_classes=3):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(2, 4, 3, 2, 1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(4 * 4 * 4, n_classes + 1))

    def forward(self, x, ref, classes_onehot=None):
        return self.net(torch.cat([x, ref], 1))


class DataProvider:
    def get_n_classes(self):
        return 3

    def get_sample(self):
        return torch.rand(4, 1, 8, 8), torch.tensor([0, 1, 2, 1]), torch.rand(4, 1, 8, 8)


def index_to_onehot(index, n_classes):
    return torch.nn.functional.one_hot(index, n_classes).float()


class Model:
    def __init__(self, lambda_decD_loss=1.0, n_decD_steps=1):
        self.enc, self.dec, self.decD = Enc(), Dec(), DecD()
        self.opt_enc = torch.optim.Adam(self.enc.parameters(), lr=1e-3)
        self.opt_dec = torch.optim.Adam(self.dec.parameters(), lr=1e-3)
        self.opt_decD = torch.optim.Adam(self.decD.parameters(), lr=1e-3)
        self.crit_recon = nn.BCELoss()
        self.crit_decD = nn.CrossEntropyLoss()
        self.lambda_decD_loss = lambda_decD_loss
        self.n_decD_steps = n_decD_steps
        self.data_provider = DataProvider()

    def reparameterize(self, mu, log_var):
        std = torch.exp(0.5 * log_var)
        eps = torch.randn_like(std)
        return mu + eps * std

    def kld_loss(self, mu, logsigma):
        return -0.5 * torch.mean(1 + logsigma - mu.pow(2) - logsigma.exp())

    def vae_loss(self, recon_loss, kld_loss):
        return recon_loss + kld_loss

    def iteration(self):
        enc, dec, decD = self.enc, self.dec, self.decD
        opt_enc, opt_dec, opt_decD = self.opt_enc, self.opt_dec, self.opt_decD
        crit_recon, crit_decD = (self.crit_recon, self.crit_decD)

        for p in decD.parameters():
            p.requires_grad = True
        for p in enc.parameters():
            p.requires_grad = False
        for p in dec.parameters():
            p.requires_grad = False

        decDLoss = 0
        for step_num in range(self.n_decD_steps):
            x, classes, ref = self.data_provider.get_sample()
            classes_onehot = index_to_onehot(classes, self.data_provider.get_n_classes())
            y_xReal = classes
            y_xFake = torch.zeros(classes.shape).fill_(self.data_provider.get_n_classes()).long()

            with torch.no_grad():
                mu, logsigma = enc(x, ref, classes_onehot)
                z = self.reparameterize(mu, logsigma)
                xHat = dec(z, ref, classes_onehot)

            opt_enc.zero_grad()
            opt_dec.zero_grad()
            opt_decD.zero_grad()

            yHat_xReal = decD(x, ref, classes_onehot)
            errDecD_real = crit_decD(yHat_xReal, y_xReal)
            yHat_xFake = decD(xHat, ref)
            errDecD_fake = crit_decD(yHat_xFake, y_xFake)

            z.normal_()
            decDLoss_tmp = (errDecD_real + errDecD_fake) / 2
            decDLoss_tmp.backward()
            opt_decD.step()
            decDLoss += decDLoss_tmp.item()

        for p in enc.parameters():
            p.requires_grad = True
        for p in dec.parameters():
            p.requires_grad = True
        for p in decD.parameters():
            p.requires_grad = False

        opt_enc.zero_grad()
        opt_dec.zero_grad()
        opt_decD.zero_grad()

        # train autoencoder
        mu, logsigma = enc(x, ref, classes_onehot)
        z = self.reparameterize(mu, logsigma)
        kld_loss = self.kld_loss(mu, logsigma)
        xHat = dec(z, ref, classes_onehot)
        recon_loss = crit_recon(xHat, x)
        beta_vae_loss = self.vae_loss(recon_loss, kld_loss)
        beta_vae_loss.backward(retain_graph=True)

        recon_loss = recon_loss.item()
        kld_loss = kld_loss.item()

        opt_enc.step()  # <-- IPL001: updates the encoder weights in place while xHat's graph (used below) still needs them

        if self.lambda_decD_loss > 0:
            for p in enc.parameters():
                p.requires_grad = False
            # update wrt reconstructed images
            yHat_xFake = decD(xHat, ref)
            minimaxDecDLoss = crit_decD(yHat_xFake, y_xReal)
            minimaxDecDLoss.mul(self.lambda_decD_loss).backward()
            minimaxDecDLoss = minimaxDecDLoss.item()
        else:
            minimaxDecDLoss = 0

        opt_dec.step()
        return [recon_loss, kld_loss, minimaxDecDLoss, decDLoss]


model = Model()
errors = model.iteration()
