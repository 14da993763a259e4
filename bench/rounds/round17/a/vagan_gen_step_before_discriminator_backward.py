# label: hazard raises no-twin
# why: gen_enc_gmm_ops.step() rewrites the generator/encoder weights in place after g_loss.backward(retain_graph=True), but d_loss is built from D_fake = dis(fake_images) of the same forward pass and backpropagates into the generator graph
# source: https://github.com/fwt-team/VaGAN-pytorch/issues/1
from itertools import chain

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
DEVICE = 'cpu'


class Reshape(nn.Module):
    def __init__(self, shape=[]):
        super(Reshape, self).__init__()
        self.shape = shape

    def forward(self, x):
        return x.view(x.size(0), *self.shape)


class Generator(nn.Module):
    def __init__(self, latent_dim=4, x_shape=(1, 8, 8), cshape=(8, 2, 2)):
        super(Generator, self).__init__()
        self.latent_dim = latent_dim
        self.ishape = cshape
        self.iels = int(np.prod(self.ishape))
        self.x_shape = x_shape
        self.output_channels = x_shape[0]
        self.model = nn.Sequential(
            nn.Linear(self.latent_dim, 16),
            nn.ReLU(True),
            nn.Linear(16, self.iels),
            nn.BatchNorm1d(self.iels),
            nn.ReLU(True),
            Reshape(self.ishape),
        )
        self.model = nn.Sequential(
            self.model,
            nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1),
            nn.BatchNorm2d(4),
            nn.ReLU(True),
            nn.ConvTranspose2d(4, self.output_channels, 4, stride=2, padding=1),
            nn.Sigmoid(),
        )

    def forward(self, x):
        gen_img = self.model(x)
        return gen_img.view(x.size(0), *self.x_shape)


class Encoder(nn.Module):
    def __init__(self, input_channels=1, output_channels=4, cshape=(8, 2, 2)):
        super(Encoder, self).__init__()
        self.iels = int(np.prod(cshape))
        self.model = nn.Sequential(
            nn.Conv2d(input_channels, 4, 4, stride=2, padding=1),
            nn.BatchNorm2d(4),
            nn.ReLU(True),
            nn.Conv2d(4, 8, 4, stride=2, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(True),
            Reshape((self.iels,)),
            nn.Linear(self.iels, 16),
            nn.BatchNorm1d(16),
            nn.ReLU(True),
        )
        self.mu = nn.Linear(16, output_channels)
        self.con = nn.Linear(16, output_channels)

    def forward(self, x):
        z = self.model(x)
        mu = self.mu(z)
        log_sigma = self.con(z)
        sigma = torch.exp(log_sigma * 0.5)
        std_z = torch.randn_like(mu)
        z = mu + (sigma * std_z)
        return z, mu, log_sigma


class GMM(nn.Module):
    def __init__(self, n_cluster=3, n_features=4):
        super(GMM, self).__init__()
        self.n_cluster = n_cluster
        self.n_features = n_features
        self.pi_ = nn.Parameter(torch.FloatTensor(self.n_cluster, ).fill_(1) / self.n_cluster, requires_grad=True)
        self.mu_c = nn.Parameter(torch.FloatTensor(self.n_cluster, self.n_features).fill_(0), requires_grad=True)
        self.log_sigma2_c = nn.Parameter(torch.FloatTensor(self.n_cluster, self.n_features).fill_(0), requires_grad=True)

    def gaussian_pdfs_log(self, x, mus, log_sigma2s):
        G = []
        for c in range(self.n_cluster):
            G.append(self.gaussian_pdf_log(x, mus[c:c + 1, :], log_sigma2s[c:c + 1, :]).view(-1, 1))
        return torch.cat(G, 1)

    @staticmethod
    def gaussian_pdf_log(x, mu, log_sigma2):
        return -0.5 * (torch.sum(torch.tensor(np.log(np.pi * 2), dtype=torch.float).to(DEVICE) +
                                 log_sigma2 + (x - mu).pow(2) / torch.exp(log_sigma2), 1))


class Discriminator(nn.Module):
    def __init__(self, input_channels=1, cshape=(8, 2, 2), w_distance=False):
        super(Discriminator, self).__init__()
        self.iels = int(np.prod(cshape))
        self.model = nn.Sequential(
            nn.Conv2d(input_channels, 4, 4, stride=2, padding=1),
            nn.LeakyReLU(0.02, inplace=True),
            nn.Conv2d(4, 8, 4, stride=2, padding=1),
            nn.LeakyReLU(0.02, inplace=True),
            Reshape((self.iels,)),
            nn.Linear(self.iels, 16),
            nn.LeakyReLU(0.02, inplace=True),
            nn.Linear(16, 1),
        )
        if w_distance is False:
            self.model = nn.Sequential(self.model, nn.Sigmoid())

    def forward(self, img):
        return self.model(img)


def gmm_Loss(z_mu, z_sigma2_log, gmm):
    det = 1e-10
    z = torch.randn_like(z_mu) * torch.exp(z_sigma2_log / 2) + z_mu
    pi = gmm.pi_
    mu_c = gmm.mu_c
    log_sigma2_c = gmm.log_sigma2_c
    yita_c = torch.exp(torch.log(pi.unsqueeze(0)) + gmm.gaussian_pdfs_log(z, mu_c, log_sigma2_c)) + det
    yita_c = yita_c / (yita_c.sum(1).view(-1, 1))
    Loss = 0.5 * torch.mean(torch.sum(yita_c * torch.sum(log_sigma2_c.unsqueeze(0) +
                                                          torch.exp(z_sigma2_log.unsqueeze(1) - log_sigma2_c.unsqueeze(0)) +
                                                          (z_mu.unsqueeze(1) - mu_c.unsqueeze(0)).pow(2) /
                                                          torch.exp(log_sigma2_c.unsqueeze(0)), 2), 1))
    Loss -= torch.mean(torch.sum(yita_c * torch.log(pi.unsqueeze(0) / (yita_c)), 1)) + 0.5 * \
        torch.mean(torch.sum(1 + z_sigma2_log, 1))
    return Loss


gen = Generator()
dis = Discriminator()
encoder = Encoder()
gmm = GMM()
xe_loss = nn.BCELoss(reduction='sum')
train_batch_size = 4
n_skip_iter = 1
w_distance = False

gen_enc_gmm_ops = torch.optim.Adam(chain(gen.parameters(), encoder.parameters(), gmm.parameters()), lr=2e-3, betas=(0.5, 0.99))
dis_ops = torch.optim.Adam(dis.parameters(), lr=2e-3, betas=(0.5, 0.99))

dataloader = [(torch.rand(train_batch_size, 1, 8, 8), torch.zeros(train_batch_size))]
g_t_loss, d_t_loss = 0, 0
for index, (real_images, target) in enumerate(dataloader):
    gen.train()
    gmm.train()
    encoder.train()
    encoder.zero_grad()
    gen.zero_grad()
    gmm.zero_grad()
    dis.zero_grad()
    gen_enc_gmm_ops.zero_grad()

    z, z_mu, z_sigma2_log = encoder(real_images)
    fake_images = gen(z)

    rec_loss = xe_loss(fake_images, real_images) * real_images.size(1) / train_batch_size

    D_real = dis(real_images)
    D_fake = dis(fake_images)

    if index % n_skip_iter == n_skip_iter - 1:
        if w_distance:
            g_loss = torch.mean(D_fake) + gmm_Loss(z_mu, z_sigma2_log, gmm) + rec_loss
        else:
            g_loss = torch.mean(-torch.log(D_fake)) + gmm_Loss(z_mu, z_sigma2_log, gmm) + rec_loss
        g_loss.backward(retain_graph=True)
        gen_enc_gmm_ops.step()  # <-- IPL001: in-place update of generator/encoder weights still saved in the graph that d_loss backpropagates through
        g_t_loss += g_loss

    dis_ops.zero_grad()
    d_loss = torch.mean(-torch.log(D_real) - torch.log(1 - D_fake)) / 2
    d_loss.backward()
    dis_ops.step()
    d_t_loss += d_loss
