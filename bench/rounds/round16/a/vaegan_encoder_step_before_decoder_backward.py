# label: hazard raises no-twin
# why: optimizer_encoder.step() updates the encoder weights in place while the retained graph of loss_decoder (which flows back through the encoder) still needs them.
# source: https://github.com/lucabergamini/VAEGAN-PYTORCH/issues/5 (code: https://github.com/lucabergamini/VAEGAN-PYTORCH/blob/29102a9cab81edebb4d94d2e954711f93082d4fe/main.py)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, channel_in=3, z_size=8):
        super(Encoder, self).__init__()
        self.conv = nn.Sequential(nn.Conv2d(channel_in, 8, 4, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(True))
        self.fc = nn.Sequential(nn.Linear(8 * 4 * 4, 16, bias=False), nn.BatchNorm1d(16), nn.ReLU(True))
        self.l_mu = nn.Linear(16, z_size)
        self.l_var = nn.Linear(16, z_size)

    def forward(self, ten):
        ten = self.conv(ten)
        ten = ten.view(len(ten), -1)
        ten = self.fc(ten)
        return self.l_mu(ten), self.l_var(ten)


class Decoder(nn.Module):
    def __init__(self, z_size=8):
        super(Decoder, self).__init__()
        self.fc = nn.Sequential(nn.Linear(z_size, 8 * 4 * 4, bias=False), nn.BatchNorm1d(8 * 4 * 4), nn.ReLU(True))
        self.conv = nn.Sequential(nn.ConvTranspose2d(8, 3, 4, 2, 1), nn.Tanh())

    def forward(self, ten):
        ten = self.fc(ten)
        ten = ten.view(len(ten), 8, 4, 4)
        return self.conv(ten)


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.ReLU(True))
        self.fc = nn.Sequential(nn.Linear(8 * 4 * 4, 1), nn.Sigmoid())

    def forward(self, ten_original, ten, ten_sampled):
        ten = torch.cat((ten_original, ten, ten_sampled), 0)
        layer = self.conv(ten)
        ten = layer.view(len(layer), -1)
        return layer.view(len(layer), -1), self.fc(ten)


class VaeGan(nn.Module):
    def __init__(self, z_size=8):
        super(VaeGan, self).__init__()
        self.z_size = z_size
        self.encoder = Encoder(z_size=z_size)
        self.decoder = Decoder(z_size=z_size)
        self.discriminator = Discriminator()

    def forward(self, ten):
        mus, log_variances = self.encoder(ten)
        variances = torch.exp(log_variances * 0.5)
        ten_from_normal = torch.randn(len(ten), self.z_size)
        ten = ten_from_normal * variances + mus
        ten = self.decoder(ten)
        ten_from_normal = torch.randn(len(ten), self.z_size)
        ten_sampled = self.decoder(ten_from_normal)
        disc_layer, disc_class = self.discriminator(ten_original, ten, ten_sampled)
        return ten, disc_class, disc_layer, mus, log_variances


net = VaeGan()
optimizer_encoder = torch.optim.RMSprop(params=net.encoder.parameters(), lr=3e-4)
optimizer_decoder = torch.optim.RMSprop(params=net.decoder.parameters(), lr=3e-4)
optimizer_discriminator = torch.optim.RMSprop(params=net.discriminator.parameters(), lr=3e-4)

data_batch = torch.rand(4, 3, 8, 8) * 2 - 1
ten_original = data_batch
batch_size = len(data_batch)
out, out_labels, out_layer, mus, variances = net(data_batch)
out_layer_original = out_layer[:batch_size]
out_layer_predicted = out_layer[batch_size:-batch_size]
out_labels_original = out_labels[:batch_size]
out_labels_sampled = out_labels[-batch_size:]

mse_value = torch.sum(0.5 * (out_layer_original - out_layer_predicted) ** 2, 1).mean()
kl_value = (-0.5 * torch.sum(-variances.exp() - torch.pow(mus, 2) + variances + 1, 1)).mean()
bce_dis_original_value = -torch.log(out_labels_original + 1e-3).mean()
bce_dis_sampled_value = -torch.log(1 - out_labels_sampled + 1e-3).mean()

loss_encoder = (kl_value + mse_value)
loss_decoder = (1e-06 * mse_value - (bce_dis_original_value + bce_dis_sampled_value))
loss_discriminator = (bce_dis_original_value + bce_dis_sampled_value)
train_dis = True
train_dec = True

net.zero_grad()
loss_encoder.backward(retain_graph=True)
optimizer_encoder.step()  # <-- IPL001: encoder weights updated in place before loss_decoder backward reuses the graph
net.zero_grad()
if train_dec:
    loss_decoder.backward(retain_graph=True)
    optimizer_decoder.step()
    net.discriminator.zero_grad()
if train_dis:
    loss_discriminator.backward()
    optimizer_discriminator.step()
