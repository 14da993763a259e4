# label: hazard raises no-twin
# why: the VAE-GAN loop steps opt_dec after err_dec.backward(retain_graph=True), updating in place the decoder weights that the retained rec_enc graph saved, and then calls err_enc.backward() on rec_loss which still runs through that decoder graph.
# source: https://github.com/hui-po-wang/Pytorch-VAE-GAN/issues/5 (VAE-GAN.ipynb at commit 66fd5a7cdae9bca403db2a2af70bf98aacda6713)
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, input_channels, output_channels, representation_size=4):
        super(Encoder, self).__init__()
        self.features = nn.Sequential(
            nn.Conv2d(input_channels, representation_size, 5, stride=2, padding=2),
            nn.BatchNorm2d(representation_size),
            nn.ReLU(),
            nn.Conv2d(representation_size, representation_size * 2, 5, stride=2, padding=2),
            nn.BatchNorm2d(representation_size * 2),
            nn.ReLU(),
            nn.Conv2d(representation_size * 2, representation_size * 4, 5, stride=2, padding=2),
            nn.BatchNorm2d(representation_size * 4),
            nn.ReLU())
        self.mean = nn.Sequential(nn.Linear(representation_size * 4, 8), nn.BatchNorm1d(8), nn.ReLU(),
                                  nn.Linear(8, output_channels))
        self.logvar = nn.Sequential(nn.Linear(representation_size * 4, 8), nn.BatchNorm1d(8), nn.ReLU(),
                                    nn.Linear(8, output_channels))

    def forward(self, x):
        batch_size = x.size()[0]
        hidden_representation = self.features(x)
        mean = self.mean(hidden_representation.view(batch_size, -1))
        logvar = self.logvar(hidden_representation.view(batch_size, -1))
        return mean, logvar


class Decoder(nn.Module):
    def __init__(self, input_size, representation_size):
        super(Decoder, self).__init__()
        self.representation_size = representation_size
        dim = representation_size[0] * representation_size[1] * representation_size[2]
        self.preprocess = nn.Sequential(nn.Linear(input_size, dim), nn.BatchNorm1d(dim), nn.ReLU())
        self.deconv1 = nn.ConvTranspose2d(representation_size[0], 8, 5, stride=2, padding=2)
        self.act1 = nn.Sequential(nn.BatchNorm2d(8), nn.ReLU())
        self.deconv2 = nn.ConvTranspose2d(8, 4, 5, stride=2, padding=2)
        self.act2 = nn.Sequential(nn.BatchNorm2d(4), nn.ReLU())
        self.deconv3 = nn.ConvTranspose2d(4, 4, 5, stride=2, padding=2)
        self.act3 = nn.Sequential(nn.BatchNorm2d(4), nn.ReLU())
        self.deconv4 = nn.ConvTranspose2d(4, 3, 5, stride=1, padding=2)
        self.activation = nn.Tanh()

    def forward(self, code):
        bs = code.size()[0]
        preprocessed_codes = self.preprocess(code)
        preprocessed_codes = preprocessed_codes.view(-1, *self.representation_size)
        output = self.deconv1(preprocessed_codes, output_size=(bs, 8, 2, 2))
        output = self.act1(output)
        output = self.deconv2(output, output_size=(bs, 4, 4, 4))
        output = self.act2(output)
        output = self.deconv3(output, output_size=(bs, 4, 8, 8))
        output = self.act3(output)
        output = self.deconv4(output, output_size=(bs, 3, 8, 8))
        return self.activation(output)


class VAE_GAN_Generator(nn.Module):
    def __init__(self, input_channels, hidden_size, representation_size=(16, 1, 1)):
        super(VAE_GAN_Generator, self).__init__()
        self.hidden_size = hidden_size
        self.encoder = Encoder(input_channels, hidden_size)
        self.decoder = Decoder(hidden_size, representation_size)

    def forward(self, x):
        batch_size = x.size()[0]
        mean, logvar = self.encoder(x)
        std = logvar.mul(0.5).exp_()
        reparametrized_noise = torch.randn((batch_size, self.hidden_size))
        reparametrized_noise = mean + std * reparametrized_noise
        rec_images = self.decoder(reparametrized_noise)
        return mean, logvar, rec_images


class Discriminator(nn.Module):
    def __init__(self, input_channels):
        super(Discriminator, self).__init__()
        self.main = nn.Sequential(
            nn.Conv2d(input_channels, 4, 5, stride=1, padding=2), nn.BatchNorm2d(4), nn.LeakyReLU(0.2),
            nn.Conv2d(4, 8, 5, stride=2, padding=2), nn.BatchNorm2d(8), nn.LeakyReLU(0.2))
        self.lth_features = nn.Sequential(nn.Linear(8 * 4 * 4, 8), nn.LeakyReLU(0.2))
        self.sigmoid_output = nn.Sequential(nn.Linear(8, 1), nn.Sigmoid())

    def forward(self, x):
        batch_size = x.size()[0]
        features = self.main(x)
        lth_rep = self.lth_features(features.view(batch_size, -1))
        return self.sigmoid_output(lth_rep).view(-1)

    def similarity(self, x):
        batch_size = x.size()[0]
        features = self.main(x)
        return self.lth_features(features.view(batch_size, -1))


input_channels = 3
hidden_size = 6
lr = 3e-4
beta = 5
alpha = 0.1
gamma = 15

G = VAE_GAN_Generator(input_channels, hidden_size)
D = Discriminator(input_channels)
criterion = nn.BCELoss()
opt_enc = optim.RMSprop(G.encoder.parameters(), lr=lr)
opt_dec = optim.RMSprop(G.decoder.parameters(), lr=lr)
opt_dis = optim.RMSprop(D.parameters(), lr=lr * alpha)

data = torch.randn(4, 3, 8, 8).clamp(-1, 1)
batch_size = data.size()[0]
ones_label = torch.ones(batch_size)
zeros_label = torch.zeros(batch_size)

datav = data
mean, logvar, rec_enc = G(datav)
noisev = torch.randn(batch_size, hidden_size)
rec_noise = G.decoder(noisev)

# train discriminator
output = D(datav)
errD_real = criterion(output, ones_label)
output = D(rec_enc)
errD_rec_enc = criterion(output, zeros_label)
output = D(rec_noise)
errD_rec_noise = criterion(output, zeros_label)
dis_img_loss = errD_real + errD_rec_enc + errD_rec_noise
opt_dis.zero_grad()
dis_img_loss.backward(retain_graph=True)
opt_dis.step()

# train decoder
output = D(datav)
errD_real = criterion(output, ones_label)
output = D(rec_enc)
errD_rec_enc = criterion(output, zeros_label)
output = D(rec_noise)
errD_rec_noise = criterion(output, zeros_label)
similarity_rec_enc = D.similarity(rec_enc)
similarity_data = D.similarity(datav)
dis_img_loss = errD_real + errD_rec_enc + errD_rec_noise
gen_img_loss = - dis_img_loss
rec_loss = ((similarity_rec_enc - similarity_data) ** 2).mean()
err_dec = gamma * rec_loss + gen_img_loss
opt_dec.zero_grad()
err_dec.backward(retain_graph=True)
opt_dec.step()  # <-- IPL001: updates the decoder weights saved by the rec_enc graph that err_enc.backward() still uses

# train encoder
prior_loss = 1 + logvar - mean.pow(2) - logvar.exp()
prior_loss = (-0.5 * torch.sum(prior_loss)) / torch.numel(mean.data)
err_enc = prior_loss + beta * rec_loss
opt_enc.zero_grad()
err_enc.backward()
opt_enc.step()
