# label: hazard raises no-twin
# why: in joint training the coarse stage's output feeds the next stage, but optimize_parameters steps each stage's optimizerG (in-place weight update) before the next stage's retained-graph backward reaches back through the already-updated generator
# source: https://github.com/PeizhuoLi/ganimator/issues/5
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Conv1dModel(nn.Module):
    def __init__(self, channels, kernel_size, last_active=None, activation='LeakyReLU'):
        super(Conv1dModel, self).__init__()
        padding = (kernel_size - 1) // 2
        self.layers = nn.ModuleList()
        for i in range(len(channels) - 1):
            in_c = channels[i]
            out_c = channels[i + 1]
            seq = [nn.Conv1d(in_channels=in_c, out_channels=out_c, kernel_size=kernel_size, padding=padding)]
            if i < len(channels) - 2:
                if activation == 'LeakyReLU':
                    seq.append(nn.LeakyReLU(negative_slope=0.2, inplace=True))
                else:
                    seq.append(nn.ReLU(inplace=True))
            elif last_active is not None:
                seq.append(last_active)
            self.layers.append(nn.Sequential(*seq))
        self.output = None

    def forward(self, input, prev_img=None):
        for layer in self.layers:
            input = layer(input)
        self.output = input
        return input


class GAN_loss(nn.Module):
    def forward(self, pred, target_is_real):
        target = torch.ones_like(pred) if target_is_real else torch.zeros_like(pred)
        return F.mse_loss(pred, target)


class GAN_model:
    def __init__(self, gen, disc, lr_g=1e-3, lr_d=1e-3):
        self.gen = gen
        self.disc = disc
        self.optimizerG = torch.optim.Adam(gen.parameters(), lr=lr_g)
        self.optimizerD = torch.optim.Adam(disc.parameters(), lr=lr_d)
        self.criterion_gan = GAN_loss()
        self.loss_G = torch.tensor(0.)
        self.loss_G_total = torch.tensor(0.)

    def disc_requires_grad_(self, requires_grad):
        for para in self.disc.parameters():
            para.requires_grad = requires_grad

    def backward_G(self):
        pred_fake = self.disc(self.fake_res)
        self.loss_G = self.criterion_gan(pred_fake, True)
        loss_total = self.loss_G
        self.loss_G_total = loss_total
        loss_total.backward(retain_graph=True)

    def forward_proxy(self, real, img_base=0):
        self.delta = self.gen.output
        self.real_res = real
        self.fake_res = self.delta + img_base

    def optimize_parameters(self, gen=True, disc=True):
        if gen:
            self.disc_requires_grad_(False)
            self.optimizerG.zero_grad()
            self.backward_G()
            self.optimizerG.step()  # <-- IPL001: updates this stage's generator while later stages' graphs still need its weights
        if disc:
            self.disc_requires_grad_(True)
            self.optimizerD.zero_grad()
            self.optimizerD.step()


def draw_example(gens, z_star, lengths, amps, all_img=False):
    imgs = []
    prev_img = torch.zeros((1, z_star.shape[1], lengths[0]))
    for step, (gen, length, amp) in enumerate(zip(gens, lengths, amps)):
        noise = torch.randn((1, 1, length)) * amp
        noise = noise.repeat(1, z_star.shape[1], 1)
        prev_img = gen(noise + prev_img, prev_img) + prev_img
        imgs.append(prev_img)
        if len(lengths) >= step + 2:
            prev_img = F.interpolate(prev_img, size=lengths[step + 1], mode='linear', align_corners=False)
    return prev_img if not all_img else imgs


n_channels = 6
lengths = [8, 12]
amps = [0.1, 0.05]
gens = [Conv1dModel([n_channels, 8, n_channels], 3) for _ in lengths]
discs = [Conv1dModel([n_channels, 8, 1], 3) for _ in lengths]
gan_models = [GAN_model(g, d) for g, d in zip(gens, discs)]
reals = [torch.randn(1, n_channels, length) for length in lengths]
z_star = torch.randn(1, n_channels, lengths[0])

imgs = draw_example(gens, z_star, lengths, amps, all_img=True)
imgs.append(torch.zeros_like(reals[0]))  # Trick for get the base image for stage_id = 0
for j in range(len(gan_models)):
    stage_id = j
    img_base = F.interpolate(imgs[stage_id - 1], size=lengths[stage_id], mode='linear', align_corners=False)
    gan_models[j].forward_proxy(reals[stage_id], img_base)

optimize_lambda = lambda x: x.optimize_parameters(gen=True, disc=False)
list(map(optimize_lambda, gan_models))
