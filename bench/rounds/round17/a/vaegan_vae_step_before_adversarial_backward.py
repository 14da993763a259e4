# label: hazard raises no-twin
# why: optimizerVAE.step() updates the VAE weights in place after vae_loss.backward(retain_graph=True), then errVAE backpropagates D(recon_data) through the same retained VAE graph whose saved weights were modified
# source: https://github.com/YixinChen-AI/CVAE-GAN-zoos-PyTorch-Beginner/issues/10
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(88)
device = 'cpu'
nz = 8


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 4, kernel_size=3, stride=2, padding=1),
            nn.BatchNorm2d(4),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(4, 8, kernel_size=3, stride=2, padding=1),
            nn.BatchNorm2d(8),
            nn.LeakyReLU(0.2, inplace=True),
        )
        self.encoder_fc1 = nn.Linear(8 * 7 * 7, nz)
        self.encoder_fc2 = nn.Linear(8 * 7 * 7, nz)
        self.decoder_fc = nn.Linear(nz, 8 * 7 * 7)
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(8, 4, 4, 2, 1),
            nn.ReLU(inplace=True),
            nn.ConvTranspose2d(4, 1, 4, 2, 1),
            nn.Sigmoid(),
        )

    def noise_reparameterize(self, mean, logvar):
        eps = torch.randn(mean.shape).to(device)
        z = mean + eps * torch.exp(logvar)
        return z

    def forward(self, x):
        out1, out2 = self.encoder(x), self.encoder(x)
        mean = self.encoder_fc1(out1.view(out1.shape[0], -1))
        logstd = self.encoder_fc2(out2.view(out2.shape[0], -1))
        z = self.noise_reparameterize(mean, logstd)
        out3 = self.decoder_fc(z)
        out3 = out3.view(out3.shape[0], 8, 7, 7)
        out3 = self.decoder(out3)
        return out3, mean, logstd


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.dis = nn.Sequential(
            nn.Conv2d(1, 4, 3, stride=1, padding=1),
            nn.LeakyReLU(0.2, True),
            nn.MaxPool2d((2, 2)),
            nn.Conv2d(4, 8, 3, stride=1, padding=1),
            nn.LeakyReLU(0.2, True),
            nn.MaxPool2d((2, 2)),
        )
        self.fc = nn.Sequential(
            nn.Linear(7 * 7 * 8, 16),
            nn.LeakyReLU(0.2, True),
            nn.Linear(16, 1),
            nn.Sigmoid()
        )

    def forward(self, input):
        x = self.dis(input)
        x = x.view(x.size(0), -1)
        x = self.fc(x)
        return x.squeeze(1)


def loss_function(recon_x, x, mean, logstd):
    MSE = MSECriterion(recon_x, x)
    var = torch.pow(torch.exp(logstd), 2)
    KLD = -0.5 * torch.sum(1 + torch.log(var) - torch.pow(mean, 2) - var)
    return MSE + KLD


vae = VAE().to(device)
D = Discriminator().to(device)
criterion = nn.BCELoss().to(device)
MSECriterion = nn.MSELoss().to(device)
optimizerD = optim.Adam(D.parameters(), lr=0.0001)
optimizerVAE = optim.Adam(vae.parameters(), lr=0.0001)

dataloader = [(torch.rand(4, 1, 28, 28), torch.zeros(4, dtype=torch.long))]
for i, (data, label) in enumerate(dataloader, 0):
    D.zero_grad()
    batch_size = data.shape[0]
    output = D(data)
    real_label = torch.ones(batch_size).to(device)
    fake_label = torch.zeros(batch_size).to(device)
    errD_real = criterion(output, real_label)
    errD_real.backward()
    z = torch.randn(batch_size, nz).to(device)
    fake_data = vae.decoder_fc(z).view(z.shape[0], 8, 7, 7)
    fake_data = vae.decoder(fake_data)
    output = D(fake_data)
    errD_fake = criterion(output, fake_label)
    errD_fake.backward()
    errD = errD_real + errD_fake
    optimizerD.step()

    recon_data, mean, logstd = vae(data)
    vae.zero_grad()
    vae_loss = loss_function(recon_data, data, mean, logstd)
    vae_loss.backward(retain_graph=True)
    optimizerVAE.step()  # <-- IPL001: in-place update of VAE weights that the retained recon_data graph still needs

    vae.zero_grad()
    real_label = torch.ones(batch_size).to(device)
    output = D(recon_data)
    errVAE = criterion(output, real_label)
    errVAE.backward()
    optimizerVAE.step()
