# label: hazard raises no-twin
# why: logits_Dl_l1 is computed by disc_l before optimizer_dl.step() updates disc_l's weights in place, and the autoencoder loss loss_AE_l later reuses logits_Dl_l1, so loss_ae_all.backward() finds dense_5.weight modified
# source: https://github.com/xiehousen/OCGAN-Pytorch/issues/3 (train.py at commit b5aa061)
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable

torch.manual_seed(0)
Tensor = torch.FloatTensor


class get_encoder(nn.Module):
    def __init__(self):
        super(get_encoder, self).__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=3 // 2)
        self.batch_norm_1 = nn.BatchNorm2d(8)
        self.maxpooling_1 = nn.MaxPool2d(3, stride=2, padding=3 // 2)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=3 // 2)
        self.activation = nn.Tanh()

    def forward(self, input):
        output = self.conv1(input)
        output = self.batch_norm_1(output)
        output = self.maxpooling_1(output)
        output = self.activation(self.conv2(output))
        output = output.view(output.size(0), -1)
        return output


class get_decoder(nn.Module):
    def __init__(self):
        super(get_decoder, self).__init__()
        self.conv1 = nn.Upsample(scale_factor=2, mode='nearest')
        self.conv2 = nn.ConvTranspose2d(8, 8, 3, padding=3 // 2)
        self.batch_norm_1 = nn.BatchNorm2d(8)
        self.conv3 = nn.ConvTranspose2d(8, 1, 3, padding=3 // 2)

    def forward(self, input):
        output = input.view(input.size(0), 8, 3, 3)
        output = self.conv1(output)
        output = self.batch_norm_1(self.conv2(output))
        output = torch.tanh(self.conv3(output))
        return output


class get_disc_latent(nn.Module):
    def __init__(self):
        super(get_disc_latent, self).__init__()
        self.dense_1 = nn.Linear(72, 32)
        self.batch_norm_1 = nn.BatchNorm1d(32)
        self.dense_4 = nn.Linear(32, 16)
        self.batch_norm_4 = nn.BatchNorm1d(16)
        self.dense_5 = nn.Linear(16, 1)

    def forward(self, input):
        output = input.view(input.size(0), -1)
        output = torch.relu(self.batch_norm_1(self.dense_1(output)))
        output = torch.relu(self.batch_norm_4(self.dense_4(output)))
        output = torch.sigmoid(self.dense_5(output))
        return output


class get_disc_visual(nn.Module):
    def __init__(self):
        super(get_disc_visual, self).__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, stride=2, padding=1)
        self.leaky_relu = nn.LeakyReLU(0.2)
        self.conv4 = nn.Conv2d(8, 1, 3, stride=2, padding=1)
        self.conv5 = nn.AdaptiveAvgPool2d(output_size=1)

    def forward(self, input):
        output = self.leaky_relu(self.conv1(input))
        output = self.conv5(self.conv4(output))
        output = output.view(output.size(0), -1)
        return torch.sigmoid(output)


get_classifier = get_disc_visual


def train_step(inputs, enc, dec, cl, disc_l, disc_v,
               optimizer_en, optimizer_de, optimizer_c, optimizer_dl, optimizer_dv,
               criterion_ae, criterion_ce):
    l2 = torch.rand(inputs.size(0), 72, 1, 1) * 2 - 1

    dec_l2 = dec(l2)
    n = torch.randn(inputs.size(0), 1, 6, 6) * 0.1
    l1 = enc(inputs + n)
    logits_C_l1 = cl(dec(l1))
    logits_C_l2 = cl(dec_l2)

    valid_logits_C_l1 = Variable(Tensor(logits_C_l1.shape[0], 1).fill_(1.0), requires_grad=False)
    fake_logits_C_l2 = Variable(Tensor(logits_C_l2.shape[0], 1).fill_(0.0), requires_grad=False)
    loss_cl = (criterion_ce(logits_C_l1, valid_logits_C_l1) + criterion_ce(logits_C_l2, fake_logits_C_l2)) / 2
    cl.zero_grad()
    loss_cl.backward(retain_graph=True)
    optimizer_c.step()

    disc_l_l1 = l1.view(l1.size(0), 8, 3, 3)
    disc_l.zero_grad()
    logits_Dl_l1 = disc_l(disc_l_l1)
    logits_Dl_l2 = disc_l(l2)
    dl_logits_DL_l1 = Variable(Tensor(logits_Dl_l1.shape[0], 1).fill_(0.0), requires_grad=False)
    dl_logits_DL_l2 = Variable(Tensor(logits_Dl_l2.shape[0], 1).fill_(1.0), requires_grad=False)
    loss_dl = (criterion_ce(logits_Dl_l1, dl_logits_DL_l1) + criterion_ce(logits_Dl_l2, dl_logits_DL_l2)) / 2
    loss_dl.backward(retain_graph=True)
    optimizer_dl.step()  # <-- IPL001: updates disc_l weights that logits_Dl_l1 still needs for loss_ae_all.backward()

    logits_Dv_X = disc_v(inputs)
    logits_Dv_l2 = disc_v(dec(l2).detach())
    loss_dv = (criterion_ce(logits_Dv_X, torch.ones_like(logits_Dv_X))
               + criterion_ce(logits_Dv_l2, torch.zeros_like(logits_Dv_l2))) / 2
    disc_v.zero_grad()
    loss_dv.backward()
    optimizer_dv.step()

    ######  update ae
    Xh = dec(l1)
    loss_mse = criterion_ae(Xh, inputs)
    ones_logits_Dl_l1 = Variable(Tensor(logits_Dl_l1.shape[0], 1).fill_(1.0), requires_grad=False)
    loss_AE_l = criterion_ce(logits_Dl_l1, ones_logits_Dl_l1)
    logits_Dv_l2_mine = disc_v(dec_l2)
    loss_ae_v = criterion_ce(logits_Dv_l2_mine, torch.ones_like(logits_Dv_l2_mine))
    loss_ae_all = 10 * loss_mse + loss_ae_v + loss_AE_l

    enc.zero_grad()
    dec.zero_grad()
    loss_ae_all.backward()
    optimizer_en.step()
    optimizer_de.step()
    return loss_ae_all


enc = get_encoder()
dec = get_decoder()
disc_v = get_disc_visual()
disc_l = get_disc_latent()
cl = get_classifier()
criterion_ce = nn.BCELoss()
criterion_ae = nn.MSELoss()
optimizer_en = optim.Adam(enc.parameters(), lr=1e-3, betas=(0.9, 0.99))
optimizer_de = optim.Adam(dec.parameters(), lr=1e-3, betas=(0.9, 0.99))
optimizer_dl = optim.Adam(disc_l.parameters(), lr=1e-3, betas=(0.9, 0.99))
optimizer_dv = optim.Adam(disc_v.parameters(), lr=1e-3, betas=(0.9, 0.99))
optimizer_c = optim.Adam(cl.parameters(), lr=1e-3, betas=(0.9, 0.99))

inputs = torch.rand(4, 1, 6, 6) * 2 - 1
loss_ae_all = train_step(inputs, enc, dec, cl, disc_l, disc_v,
                         optimizer_en, optimizer_de, optimizer_c, optimizer_dl, optimizer_dv,
                         criterion_ae, criterion_ce)
