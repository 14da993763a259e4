# label: safe
# why: exp_() runs on a fresh temporary (logvar.mul(0.5)) whose old value nothing saved, and add_() runs on the product eps*std whose backward only needs its inputs.
# source: https://github.com/bhpfelix/Variational-Autoencoder-PyTorch/issues/1
import torch
import torch.nn as nn

torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self, nc=3, ngf=4, ndf=4, latent_variable_size=6):
        super(VAE, self).__init__()
        self.nc = nc
        self.ndf = ndf
        self.latent_variable_size = latent_variable_size
        self.e1 = nn.Conv2d(nc, ndf, 4, 2, 1)
        self.bn1 = nn.BatchNorm2d(ndf)
        self.fc1 = nn.Linear(ndf * 4 * 4, latent_variable_size)
        self.fc2 = nn.Linear(ndf * 4 * 4, latent_variable_size)
        self.d1 = nn.Linear(latent_variable_size, ngf * 4 * 4)
        self.d2 = nn.ConvTranspose2d(ngf, nc, 4, 2, 1)
        self.leakyrelu = nn.LeakyReLU(0.2)
        self.relu = nn.ReLU()
        self.sigmoid = nn.Sigmoid()

    def encode(self, x):
        h1 = self.leakyrelu(self.bn1(self.e1(x)))
        h1 = h1.view(-1, self.ndf * 4 * 4)
        return self.fc1(h1), self.fc2(h1)

    def reparametrize(self, mu, logvar):
        std = logvar.mul(0.5).exp_()
        eps = torch.FloatTensor(std.size()).normal_()
        return eps.mul(std).add_(mu)

    def decode(self, z):
        h1 = self.relu(self.d1(z))
        h1 = h1.view(-1, self.ndf, 4, 4)
        return self.sigmoid(self.d2(h1))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, self.nc, 8, 8))
        z = self.reparametrize(mu, logvar)
        res = self.decode(z)
        return res, mu, logvar


def loss_function(recon_x, x, mu, logvar):
    BCE = nn.functional.binary_cross_entropy(recon_x, x, reduction='sum')
    KLD_element = mu.pow(2).add_(logvar.exp()).mul_(-1).add_(1).add_(logvar)
    KLD = torch.sum(KLD_element).mul_(-0.5)
    return BCE + KLD


model = VAE()
data = torch.rand(2, 3, 8, 8)
recon_batch, mu, logvar = model(data)
loss = loss_function(recon_batch, data, mu, logvar)
loss.backward()
