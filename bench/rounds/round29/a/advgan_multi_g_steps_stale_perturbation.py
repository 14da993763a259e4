# label: hazard raises no-twin
# why: with n_steps_G > 1 the G loop keeps reusing perturbation/adv_images computed once from G, so after the first optimizer_G.step() rewrites G's conv weights in place the second loss_G.backward(retain_graph=True) reaches G nodes whose saved weights changed.
# source: https://github.com/GiorgosKarantonis/Adversarial-Attacks-with-Relativistic-AdvGAN/issues/8 (src/advGAN.py AdvGAN_Attack.train_batch)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())

    def forward(self, x):
        return self.net(x)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 4, 2, 1))

    def forward(self, x):
        logits = self.net(x).mean(dim=(1, 2, 3))
        return logits, torch.sigmoid(logits)


class AdvGAN_Attack:
    def __init__(self, model, n_labels=4, n_steps_D=1, n_steps_G=2, is_relativistic=True,
                 l_inf_bound=0.3, c=0.1, kappa=0.0, alpha=1.0, beta=1.0, gamma=1.0):
        self.device = 'cpu'
        self.model = model
        self.n_labels = n_labels
        self.G = Generator()
        self.D = Discriminator()
        self.n_steps_D, self.n_steps_G = n_steps_D, n_steps_G
        self.is_relativistic = is_relativistic
        self.l_inf_bound, self.c, self.kappa = l_inf_bound, c, kappa
        self.alpha, self.beta, self.gamma = alpha, beta, gamma
        self.optimizer_G = torch.optim.Adam(self.G.parameters(), lr=1e-3)
        self.optimizer_D = torch.optim.Adam(self.D.parameters(), lr=1e-3)

    def train_batch(self, x, labels):
        # optimize D
        for i in range(self.n_steps_D):
            perturbation = self.G(x)

            adv_images = torch.clamp(perturbation, -self.l_inf_bound, self.l_inf_bound) + x
            adv_images = torch.clamp(adv_images, 0, 1)

            self.D.zero_grad()
            logits_real, pred_real = self.D(x)
            logits_fake, pred_fake = self.D(adv_images.detach())
            real = torch.ones_like(pred_real, device=self.device)

            loss_D_real = torch.mean((logits_real - torch.mean(logits_fake) - real) ** 2)
            loss_D_fake = torch.mean((logits_fake - torch.mean(logits_real) + real) ** 2)
            loss_D = (loss_D_fake + loss_D_real) / 2
            loss_D.backward()
            self.optimizer_D.step()

        # optimize G
        for i in range(self.n_steps_G):
            self.G.zero_grad()

            perturbation_norm = torch.mean(torch.norm(perturbation.view(perturbation.shape[0], -1), 2, dim=1))
            loss_hinge = torch.max(torch.zeros(1, device=self.device), perturbation_norm - self.c)

            logits_model = self.model(adv_images)
            probs_model = F.softmax(logits_model, dim=1)
            onehot_labels = torch.eye(self.n_labels, device=self.device)[labels]

            real_class_prob = torch.sum(onehot_labels * probs_model, dim=1)
            target_class_prob, _ = torch.max((1 - onehot_labels) * probs_model - onehot_labels * 10000, dim=1)
            loss_adv = torch.max(real_class_prob - target_class_prob, self.kappa * torch.ones_like(target_class_prob))
            loss_adv = torch.sum(loss_adv)

            logits_real, pred_real = self.D(x)
            logits_fake, pred_fake = self.D(adv_images)
            loss_G_real = torch.mean((logits_real - torch.mean(logits_fake) + real) ** 2)
            loss_G_fake = torch.mean((logits_fake - torch.mean(logits_real) - real) ** 2)
            loss_G_gan = (loss_G_real + loss_G_fake) / 2

            loss_G = self.gamma * loss_adv + self.alpha * loss_G_gan + self.beta * loss_hinge
            loss_G.backward(retain_graph=True)
            self.optimizer_G.step()  # <-- IPL001

        return loss_D.detach(), loss_G.detach()


def main():
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.AdaptiveAvgPool2d(1), nn.Flatten())
    for p in model.parameters():
        p.requires_grad_(False)
    attack = AdvGAN_Attack(model)
    x = torch.rand(4, 3, 8, 8)
    labels = torch.tensor([0, 1, 2, 3])
    loss_D, loss_G = attack.train_batch(x, labels)
    return loss_D, loss_G, attack.G.net[0].weight.detach().clone()


loss_D, loss_G, w = main()
