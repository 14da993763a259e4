# label: hazard raises no-twin
# why: with n_steps_G > 1 the generator loop reuses the perturbation/adv_images built before the loop, so the second loss_G.backward() runs through G's graph whose conv weights optimizer_G.step() already updated in place.
# source: https://github.com/GiorgosKarantonis/Adversarial-Attacks-with-Relativistic-AdvGAN/issues/8
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, gen_input_nc, image_nc):
        super(Generator, self).__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(gen_input_nc, 8, kernel_size=3, padding=1),
            nn.InstanceNorm2d(8),
            nn.ReLU(),
        )
        self.decoder = nn.Sequential(nn.Conv2d(8, image_nc, kernel_size=3, padding=1), nn.Tanh())

    def forward(self, x):
        return self.decoder(self.encoder(x))


class Discriminator(nn.Module):
    def __init__(self, image_nc):
        super(Discriminator, self).__init__()
        self.model = nn.Sequential(
            nn.Conv2d(image_nc, 8, kernel_size=4, stride=2, padding=1),
            nn.LeakyReLU(0.2),
            nn.Conv2d(8, 1, kernel_size=4, stride=2, padding=1),
        )

    def forward(self, x):
        logits = self.model(x).view(x.shape[0], -1).mean(1, keepdim=True)
        return logits, torch.sigmoid(logits)


class AdvGAN_Attack:
    def __init__(self, model, n_labels, n_channels, lr=1e-3, l_inf_bound=0.3, alpha=1.0, beta=1.0,
                 gamma=1.0, kappa=0.0, c=0.1, n_steps_D=1, n_steps_G=2, is_relativistic=True):
        self.n_labels = n_labels
        self.model = model
        self.l_inf_bound = l_inf_bound
        self.alpha, self.beta, self.gamma, self.kappa, self.c = alpha, beta, gamma, kappa, c
        self.n_steps_D = n_steps_D
        self.n_steps_G = n_steps_G
        self.is_relativistic = is_relativistic
        self.G = Generator(n_channels, n_channels)
        self.D = Discriminator(n_channels)
        self.optimizer_G = torch.optim.Adam(self.G.parameters(), lr=lr)
        self.optimizer_D = torch.optim.Adam(self.D.parameters(), lr=lr)

    def train_batch(self, x, labels):
        # optimize D
        for i in range(self.n_steps_D):
            perturbation = self.G(x)
            adv_images = torch.clamp(perturbation, -self.l_inf_bound, self.l_inf_bound) + x
            adv_images = torch.clamp(adv_images, 0, 1)

            self.D.zero_grad()
            logits_real, pred_real = self.D(x)
            logits_fake, pred_fake = self.D(adv_images.detach())
            real = torch.ones_like(pred_real)

            loss_D_real = torch.mean((logits_real - torch.mean(logits_fake) - real) ** 2)
            loss_D_fake = torch.mean((logits_fake - torch.mean(logits_real) + real) ** 2)
            loss_D = (loss_D_fake + loss_D_real) / 2
            loss_D.backward()
            self.optimizer_D.step()

        # optimize G
        for i in range(self.n_steps_G):
            self.G.zero_grad()

            # the Hinge Loss part of L
            perturbation_norm = torch.mean(torch.norm(perturbation.view(perturbation.shape[0], -1), 2, dim=1))
            loss_hinge = torch.max(torch.zeros(1), perturbation_norm - self.c)

            # the Adv Loss part of L
            logits_model = self.model(adv_images)
            probs_model = F.softmax(logits_model, dim=1)
            onehot_labels = torch.eye(self.n_labels)[labels]
            real_class_prob = torch.sum(onehot_labels * probs_model, dim=1)
            target_class_prob, _ = torch.max((1 - onehot_labels) * probs_model - onehot_labels * 10000, dim=1)
            loss_adv = torch.max(real_class_prob - target_class_prob, self.kappa * torch.ones_like(target_class_prob))
            loss_adv = torch.sum(loss_adv)

            # the GAN Loss part of L
            logits_real, pred_real = self.D(x)
            logits_fake, pred_fake = self.D(adv_images)
            loss_G_real = torch.mean((logits_real - torch.mean(logits_fake) + real) ** 2)
            loss_G_fake = torch.mean((logits_fake - torch.mean(logits_real) - real) ** 2)
            loss_G_gan = (loss_G_real + loss_G_fake) / 2

            loss_G = self.gamma * loss_adv + self.alpha * loss_G_gan + self.beta * loss_hinge
            loss_G.backward(retain_graph=True)
            self.optimizer_G.step()  # <-- IPL001

        return loss_D.detach(), loss_G.detach(), loss_G_gan.detach(), loss_hinge.detach(), loss_adv.detach()


def main():
    target_model = nn.Sequential(nn.Flatten(), nn.Linear(1 * 8 * 8, 10))
    for p in target_model.parameters():
        p.requires_grad_(False)
    attack = AdvGAN_Attack(target_model, n_labels=10, n_channels=1, n_steps_G=2)
    images = torch.rand(4, 1, 8, 8)
    labels = torch.tensor([1, 3, 5, 7])
    losses = attack.train_batch(images, labels)
    return losses, attack.G.decoder[0].weight.detach()


losses, g_weight = main()
