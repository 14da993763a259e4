# label: safe
# why: the critic's in-place ReLUs overwrite conv outputs that no backward (or double-backward for the gradient penalty) reads, the fake batch enters the critic through .data so the critic loop never builds a generator graph, and each backward runs before the optimizer step that follows it
# source: https://github.com/caogang/wgan-gp/issues/4
import torch
import torch.autograd as autograd
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(1)
DIM = 4
BATCH_SIZE = 4
CRITIC_ITERS = 2
LAMBDA = 10
OUTPUT_DIM = 784


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()
        preprocess = nn.Sequential(nn.Linear(128, 4 * 4 * 4 * DIM), nn.ReLU(True))
        block1 = nn.Sequential(nn.ConvTranspose2d(4 * DIM, 2 * DIM, 5), nn.ReLU(True))
        block2 = nn.Sequential(nn.ConvTranspose2d(2 * DIM, DIM, 5), nn.ReLU(True))
        deconv_out = nn.ConvTranspose2d(DIM, 1, 8, stride=2)
        self.block1 = block1
        self.block2 = block2
        self.deconv_out = deconv_out
        self.preprocess = preprocess
        self.sigmoid = nn.Sigmoid()

    def forward(self, input):
        output = self.preprocess(input)
        output = output.view(-1, 4 * DIM, 4, 4)
        output = self.block1(output)
        output = output[:, :, :7, :7]
        output = self.block2(output)
        output = self.deconv_out(output)
        output = self.sigmoid(output)
        return output.view(-1, OUTPUT_DIM)


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        main = nn.Sequential(
            nn.Conv2d(1, DIM, 5, stride=2, padding=2),
            nn.ReLU(True),
            nn.Conv2d(DIM, 2 * DIM, 5, stride=2, padding=2),
            nn.ReLU(True),
            nn.Conv2d(2 * DIM, 4 * DIM, 5, stride=2, padding=2),
            nn.ReLU(True),
        )
        self.main = main
        self.output = nn.Linear(4 * 4 * 4 * DIM, 1)

    def forward(self, input):
        input = input.view(-1, 1, 28, 28)
        out = self.main(input)
        out = out.view(-1, 4 * 4 * 4 * DIM)
        out = self.output(out)
        return out.view(-1)


def calc_gradient_penalty(netD, real_data, fake_data):
    alpha = torch.rand(BATCH_SIZE, 1)
    alpha = alpha.expand(real_data.size())
    interpolates = alpha * real_data + ((1 - alpha) * fake_data)
    interpolates = autograd.Variable(interpolates, requires_grad=True)
    disc_interpolates = netD(interpolates)
    gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                              grad_outputs=torch.ones(disc_interpolates.size()),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
    gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA
    return gradient_penalty


netG = Generator()
netD = Discriminator()
optimizerD = optim.Adam(netD.parameters(), lr=1e-4, betas=(0.5, 0.9))
optimizerG = optim.Adam(netG.parameters(), lr=1e-4, betas=(0.5, 0.9))
one = torch.tensor(1.)
mone = one * -1


def inf_train_gen():
    while True:
        yield torch.rand(BATCH_SIZE, OUTPUT_DIM).numpy()


data = inf_train_gen()
for iteration in range(1):
    for p in netD.parameters():
        p.requires_grad = True

    for iter_d in range(CRITIC_ITERS):
        _data = next(data)
        real_data = torch.Tensor(_data)
        real_data_v = autograd.Variable(real_data)

        netD.zero_grad()

        D_real = netD(real_data_v)
        D_real = D_real.mean()
        D_real.backward(mone)

        noise = torch.randn(BATCH_SIZE, 128)
        with torch.no_grad():
            noisev = autograd.Variable(noise)
            fake = autograd.Variable(netG(noisev).data)
        inputv = fake
        D_fake = netD(inputv)
        D_fake = D_fake.mean()
        D_fake.backward(one)

        gradient_penalty = calc_gradient_penalty(netD, real_data_v.data, fake.data)
        gradient_penalty.backward()

        D_cost = D_fake - D_real + gradient_penalty
        Wasserstein_D = D_real - D_fake
        optimizerD.step()

    for p in netD.parameters():
        p.requires_grad = False
    netG.zero_grad()

    noise = torch.randn(BATCH_SIZE, 128)
    noisev = autograd.Variable(noise)
    fake = netG(noisev)
    G = netD(fake)
    G = G.mean()
    G.backward(mone)
    G_cost = -G
    optimizerG.step()
