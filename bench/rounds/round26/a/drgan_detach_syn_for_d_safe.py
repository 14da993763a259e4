# label: safe no-twin
# why: backward_D() scores a detached copy of syn_image, so the discriminator loss never reaches G's graph and optimizer_G.step() only rewrites weights whose gradient has already been used.
# source: https://github.com/zhangjunh/DR-GAN-by-pytorch/issues/17
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, N_p=2, N_z=4, channel_num=3):
        super(Generator, self).__init__()
        self.G_enc = nn.Sequential(nn.Conv2d(channel_num, 8, 3, 2, 1), nn.ELU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(8 + N_p + N_z, 8 * 4 * 4)
        self.G_dec = nn.Sequential(nn.ConvTranspose2d(8, channel_num, 4, 2, 1), nn.Tanh())

    def forward(self, input, pose, noise):
        x = self.G_enc(input).flatten(1)
        x = torch.cat([x, pose, noise], 1)
        x = self.fc(x).view(-1, 8, 4, 4)
        return self.G_dec(x)


class Discriminator(nn.Module):
    def __init__(self, N_p=2, N_d=5, channel_num=3):
        super(Discriminator, self).__init__()
        self.convs = nn.Sequential(nn.Conv2d(channel_num, 8, 3, 2, 1), nn.ELU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(8, N_d + 1 + N_p)

    def forward(self, input):
        return self.fc(self.convs(input).flatten(1))


class Single_DRGAN(object):
    def initialize(self, N_p=2, N_d=5, N_z=4):
        self.N_p, self.N_d, self.N_z = N_p, N_d, N_z
        self.G = Generator(N_p, N_z)
        self.D = Discriminator(N_p, N_d)
        self.optimizer_G = optim.Adam(self.G.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.optimizer_D = optim.Adam(self.D.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.criterion = nn.CrossEntropyLoss()
        self.L1_criterion = nn.L1Loss()
        self.w_L1 = 1.0

    def set_input(self, input):
        self.image = input['image']
        self.identity = input['identity']
        self.pose = input['pose']
        batchsize = self.image.size(0)
        self.frontal_pose = torch.zeros(batchsize, dtype=torch.long)
        self.fake_identity = torch.full((batchsize,), self.N_d, dtype=torch.long)
        self.input_pose = torch.nn.functional.one_hot(self.frontal_pose, self.N_p).float()
        self.noise = torch.randn(batchsize, self.N_z)

    def forward(self, input):
        self.set_input(input)
        self.syn_image = self.G(self.image, self.input_pose, self.noise)
        self.syn = self.D(self.syn_image)
        self.syn_identity = self.syn[:, :self.N_d + 1]
        self.syn_pose = self.syn[:, self.N_d + 1:]

        self.real = self.D(self.image)
        self.real_identity = self.real[:, :self.N_d + 1]
        self.real_pose = self.real[:, self.N_d + 1:]

    def backward_G(self):
        self.Loss_G_syn_identity = self.criterion(self.syn_identity, self.identity)
        self.Loss_G_syn_pose = self.criterion(self.syn_pose, self.frontal_pose)
        self.L1_Loss = self.L1_criterion(self.syn_image, self.image)
        self.Loss_G = self.Loss_G_syn_identity + self.Loss_G_syn_pose + self.w_L1 * self.L1_Loss
        self.Loss_G.backward(retain_graph=True)

    def backward_D(self):
        self.Loss_D_real_identity = self.criterion(self.real_identity, self.identity)
        self.Loss_D_real_pose = self.criterion(self.real_pose, self.pose)
        self.syn_D = self.D(self.syn_image.detach())
        self.Loss_D_syn = self.criterion(self.syn_D[:, :self.N_d + 1], self.fake_identity)
        self.Loss_D = self.Loss_D_real_identity + self.Loss_D_real_pose + self.Loss_D_syn
        self.Loss_D.backward()

    def optimize_G_parameters(self):
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()

    def optimize_D_parameters(self):
        self.optimizer_D.zero_grad()
        self.backward_D()
        self.optimizer_D.step()


def main():
    model = Single_DRGAN()
    model.initialize()
    data = {
        'image': torch.randn(4, 3, 8, 8),
        'identity': torch.tensor([0, 1, 2, 3]),
        'pose': torch.tensor([0, 1, 1, 0]),
    }
    model.forward(data)
    model.optimize_G_parameters()
    model.optimize_D_parameters()
    return model.Loss_G.detach(), model.Loss_D.detach()


Loss_G, Loss_D = main()
