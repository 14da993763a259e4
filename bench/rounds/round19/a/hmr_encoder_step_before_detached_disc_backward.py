# label: safe
# why: e_opt.step() updates the encoder in place before d_loss.backward(), but the discriminator loss was built from total_predict_thetas.detach(), so its graph never saved encoder weights.
# source: https://github.com/MandyMo/pytorch_HMR/issues/15
import torch
import torch.nn as nn

torch.manual_seed(0)


class LinearModel(nn.Module):
    def __init__(self, fc_layers, use_dropout, drop_prob, use_ac_func):
        super().__init__()
        layers = []
        for i in range(len(fc_layers) - 1):
            layers.append(nn.Linear(fc_layers[i], fc_layers[i + 1]))
            if use_ac_func[i]:
                layers.append(nn.ReLU())
            if use_dropout[i]:
                layers.append(nn.Dropout(p=drop_prob[i]))
        self.fc_blocks = nn.Sequential(*layers)

    def forward(self, inputs):
        return self.fc_blocks(inputs)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.shape_disc = LinearModel([4, 5, 1], [False, False], [0, 0], [True, False])
        self.pose_disc = LinearModel([6, 8, 1], [False, False], [0, 0], [True, False])

    def forward(self, thetas):
        poses, shapes = thetas[:, 3:9], thetas[:, 9:]
        return torch.cat((self.pose_disc(poses), self.shape_disc(shapes)), 1)


class HMRNetBase(nn.Module):
    def __init__(self, iterations=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 4, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.regressor = LinearModel([4 + 13, 16, 13], [False, False], [0, 0], [True, False])
        self.iterations = iterations

    def forward(self, inputs):
        feature = self.encoder(inputs)
        theta = torch.zeros(inputs.shape[0], 13)
        outputs = []
        for _ in range(self.iterations):
            theta = theta + self.regressor(torch.cat([feature, theta], 1))
            outputs.append((theta, theta[:, :3] * 2.0))
        return outputs


def batch_encoder_disc_l2_loss(disc_value):
    k = disc_value.shape[0]
    return ((disc_value - 1.0) ** 2).sum() / k


def batch_adv_disc_l2_loss(real_disc_value, fake_disc_value):
    ka = real_disc_value.shape[0]
    kb = fake_disc_value.shape[0]
    lb, la = (fake_disc_value ** 2).sum() / kb, ((real_disc_value - 1) ** 2).sum() / ka
    return la, lb, la + lb


generator = HMRNetBase()
discriminator = Discriminator()
e_opt = torch.optim.Adam(generator.parameters(), lr=1e-3)
d_opt = torch.optim.Adam(discriminator.parameters(), lr=1e-3)

images = torch.randn(4, 3, 8, 8)
real_kp = torch.randn(4, 3)
mosh_real_thetas = torch.randn(5, 13)

for iter_index in range(2):
    generator_outputs = generator(images)
    total_predict_thetas = torch.cat([t for t, _ in generator_outputs], 0)
    predict_theta, predict_j2d = generator_outputs[-1]
    loss_kp_2d = (predict_j2d - real_kp).abs().mean()
    e_disc_loss = batch_encoder_disc_l2_loss(discriminator(total_predict_thetas))

    fake_thetas = total_predict_thetas.detach()
    fake_disc_value, real_disc_value = discriminator(fake_thetas), discriminator(mosh_real_thetas)
    d_disc_real, d_disc_fake, d_disc_loss = batch_adv_disc_l2_loss(real_disc_value, fake_disc_value)

    e_loss = loss_kp_2d + e_disc_loss
    d_loss = d_disc_loss

    e_opt.zero_grad()
    e_loss.backward()
    e_opt.step()

    d_opt.zero_grad()
    d_loss.backward()
    d_opt.step()

final_e_loss = e_loss.detach()
final_d_loss = d_loss.detach()
